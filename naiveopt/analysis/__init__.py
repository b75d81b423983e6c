"""Analyses of a kernel, computed on request and cached by the analysis manager (manager.py).

The functional passes store some of them in the IR (GProcedure.loops, .memory_expressions);
the optimization passes ask the manager (``ctx.am.get(proc, ShapeAnalysis)``) for the rest.
"""
