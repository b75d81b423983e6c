"""The README's "Using the output in your program" examples work as written: the pyopencl
one runs on PoCL against the CLI's output, the CUDA runtime one compiles and links with nvcc,
and the cupy one runs where cupy has a GPU (skipped elsewhere, saying so)."""
from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from conftest import REPO, nvcc, run_cli


def _section() -> str:
    with open(os.path.join(REPO, "README.md"), encoding="utf-8") as fh:
        text = fh.read()
    start = text.index("### Using the output in your program")
    return text[start:text.index("\n### ", start + 10)]


def _block(language: str, marker: str) -> str:
    (block,) = [b for b in re.findall(rf"```{language}\n(.*?)```", _section(), re.S)
                if marker in b]
    return block


def _python(cwd, code: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=REPO)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=str(cwd), env=env, timeout=600)


def test_pyopencl_example_runs_the_clis_output(tmp_path):
    example = _block("python", "import pyopencl")
    command = re.search(r"# (naiveopt \S+ -o \S+)", example).group(1).split()
    done = run_cli(os.path.join(REPO, command[1]), "-o", str(tmp_path / command[3]))
    assert done.returncode == 0, done.stderr
    assert sorted(os.listdir(tmp_path)) == ["mm_opt.cl", "mm_opt.cl.h", "mm_opt.cl.json"]
    ran = _python(tmp_path, example + "\nprint('EXAMPLE OK')\n")
    assert ran.returncode == 0 and "EXAMPLE OK" in ran.stdout, ran.stderr


@nvcc
def test_cuda_runtime_example_compiles_and_links(tmp_path):
    example = _block("cuda", "mm_launch(")
    command = re.search(r"// (naiveopt \S+ -o \S+);", example).group(1).split()
    done = run_cli(os.path.join(REPO, command[1]), "-o", str(tmp_path / command[3]))
    assert done.returncode == 0, done.stderr
    (tmp_path / "app.cu").write_text(example, encoding="utf-8")
    built = subprocess.run(["nvcc", "-arch=sm_90", "-Werror", "all-warnings", "-o",
                            str(tmp_path / "app"), str(tmp_path / "app.cu")],
                           capture_output=True, text=True, timeout=300, cwd=str(tmp_path))
    assert built.returncode == 0, built.stderr


def _cupy_gpu() -> bool:
    try:
        import cupy
        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:  # noqa: BLE001 - no cupy, no driver, no device
        return False


@pytest.mark.skipif(not _cupy_gpu(), reason="cupy with a CUDA GPU is not available here")
def test_cupy_example_runs_on_the_gpu(tmp_path):      # pragma: no cover - GPU machines only
    example = _block("python", "import cupy")
    command = re.search(r"# (naiveopt .*)\n", example).group(1).split()
    done = run_cli(os.path.join(REPO, command[1]), *command[2:-1], str(tmp_path / command[-1]))
    assert done.returncode == 0, done.stderr
    ran = _python(tmp_path, example + "\nprint('EXAMPLE OK')\n")
    assert ran.returncode == 0 and "EXAMPLE OK" in ran.stdout, ran.stderr


def test_cupy_example_reads_a_device_code_only_file(tmp_path):
    """Where it cannot run: the file it compiles is the --no-launcher output, device code
    without host code or launchers (what NVRTC accepts), and its sidecar gives the launch."""
    example = _block("python", "import cupy")
    command = re.search(r"# (naiveopt .*)\n", example).group(1).split()
    assert "--no-launcher" in command
    done = run_cli(os.path.join(REPO, command[1]), *command[2:-1], str(tmp_path / command[-1]))
    assert done.returncode == 0, done.stderr
    code = (tmp_path / "mm_opt.cu").read_text(encoding="utf-8")
    assert "__global__" in code and "_launch(" not in code and "#include" not in code
    assert (tmp_path / "mm_opt.cu.json").exists()
    # the name get_function looks up: a C++ kernel's entry is mangled ('_Z2mm...'), so the
    # example must name it in name_expressions (cupy then looks up the lowered name)
    entries = _ptx_entries(code)
    if entries is not None:
        for name in re.findall(r'get_function\("(\w+)"\)', example):
            assert name in entries or re.search(
                rf'name_expressions=\[[^]]*"{name}"', example), (name, entries)


def _ptx_entries(code: str) -> list[str] | None:
    """The entry names NVRTC gives the kernels of ``code`` (None without NVRTC)."""
    try:
        from cuda.bindings import nvrtc
    except ImportError:
        return None
    err, prog = nvrtc.nvrtcCreateProgram(code.encode(), b"k.cu", 0, [], [])
    (err,) = nvrtc.nvrtcCompileProgram(prog, 1, [b"--gpu-architecture=compute_90"])
    if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        return None
    _, size = nvrtc.nvrtcGetPTXSize(prog)
    ptx = b" " * size
    nvrtc.nvrtcGetPTX(prog, ptx)
    return re.findall(r"\.entry (\w+)", ptx.decode(errors="replace"))
