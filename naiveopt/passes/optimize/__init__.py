"""Optimization passes (paper 002, sect. 3): coalescing, merges, prefetching, partition camping.

Each pass lives in its own module and is scheduled in passes/pipeline.py.
"""
