"""Passes over the GPU IR: functional passes build it, optimization passes transform it."""
