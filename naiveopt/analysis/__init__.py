"""Analyses of a kernel, computed on request and cached by the analysis manager (manager.py)."""
