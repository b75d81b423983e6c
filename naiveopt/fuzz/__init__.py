"""Differential fuzzing: random naive kernels, optimized under random options, verified on
the OpenCL device against their input. ``python -m naiveopt.fuzz --help`` runs a campaign."""
