"""naiveopt: a source-to-source optimizer for naive CUDA and OpenCL kernels.

Embed it through :func:`optimize`; the ``naiveopt`` command is a thin layer over it.
"""
__version__ = "0.1.0"

from .api import KernelResult, OptimizeResult, optimize  # noqa: E402
from .launcher import LaunchConfig, launch_config, size_args  # noqa: E402

__all__ = ["optimize", "OptimizeResult", "KernelResult", "launch_config", "LaunchConfig",
           "size_args",
           "__version__"]
