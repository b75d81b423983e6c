# lit configuration of naiveopt's FileCheck tests: each test is a kernel whose RUN lines run
# naiveopt on it and check the output's shape with FileCheck (CHECK lines beside the input).
import os
import sys
import tempfile

import lit.formats

config.name = "naiveopt"
# lit's internal shell (lit >= 23 rejects ShTest(True), the external /bin/sh); the RUN lines
# only use pipes and redirections it supports. Pipelines fail when any command fails.
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".cu", ".cl"]
config.test_source_root = os.path.dirname(os.path.abspath(__file__))
# Keep lit's Output/ directories out of the source tree.
config.test_exec_root = lit_config.params.get("exec_root") or os.path.join(
    tempfile.gettempdir(), "naiveopt-lit")

# The Python running lit is the virtual environment's: naiveopt and filecheck live beside it.
python = lit_config.params.get("python") or sys.executable
bindir = os.path.dirname(python)
filecheck = os.path.join(bindir, "filecheck")
if not os.path.exists(filecheck):
    lit_config.fatal(f"filecheck not found next to {python}")

config.substitutions.append(("%naiveopt", f"{python} -m naiveopt.cli"))
# The naiveopt under test is the checkout this suite lives in (not whichever one the
# environment has installed, e.g. an editable install of another worktree).
repo = os.path.dirname(os.path.dirname(config.test_source_root))
config.environment["PYTHONPATH"] = os.pathsep.join(
    [repo] + [p for p in [os.environ.get("PYTHONPATH")] if p])
config.substitutions.append((r"\bFileCheck\b", filecheck))

# What naiveopt needs from the environment: nvcc on PATH (lit passes PATH and HOME), its
# caches, the OpenCL platform choice for verification, and PYTHONPATH (a checkout other than
# the one installed in the environment tests its own naiveopt).
for name in ("XDG_CACHE_HOME", "NAIVEOPT_OPENCL_PLATFORM", "POCL_CACHE_DIR", "CUDA_HOME",
             "PYTHONPATH"):
    if name in os.environ:
        config.environment[name] = os.environ[name]
