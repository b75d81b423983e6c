"""The Python API from a plain script (no ``if __name__ == "__main__":`` guard) and ``-c``.

Verification runs kernels in a spawned worker, and a batch in a pool of spawned workers; plain
spawn re-imports the caller's main module in each child, which re-ran an unguarded script's
call inside the starting child and killed it (naiveopt/workers.py). The README's example is
run exactly as printed.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest

from conftest import KERNELS_DIR, REPO


def readme_example() -> str:
    """The README's Python example (the ```python block that calls naiveopt.optimize)."""
    with open(os.path.join(REPO, "README.md"), encoding="utf-8") as fh:
        blocks = re.findall(r"```python\n(.*?)```", fh.read(), re.S)
    (example,) = [b for b in blocks if "naiveopt.optimize(open(" in b]
    return example


CHECK = """
print("STATUS", result.kernels[0].verification.status, result.verified)
"""


def _python(cwd, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=REPO)
    return subprocess.run([sys.executable, *args], capture_output=True, text=True,
                          cwd=str(cwd), env=env, timeout=600)


@pytest.fixture
def workdir(tmp_path):
    for name in ("mv.cu", "mv.toml", "vv.cu", "vv.toml"):
        shutil.copy(os.path.join(KERNELS_DIR, name), tmp_path)
    return tmp_path


def test_readme_example_as_a_script(workdir):
    example = readme_example()
    assert "__main__" not in example
    (workdir / "example.py").write_text(example + CHECK)
    done = _python(workdir, "example.py")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "STATUS passed True" in done.stdout, done.stdout + done.stderr[-3000:]
    assert "bootstrapping phase" not in done.stderr


def test_readme_example_with_dash_c(workdir):
    done = _python(workdir, "-c", readme_example() + CHECK)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "STATUS passed True" in done.stdout, done.stdout + done.stderr[-3000:]


def test_batch_pool_from_a_script(workdir):
    """Two files in a pool of two spawned workers, from an unguarded script."""
    (workdir / "batch_script.py").write_text(
        "from naiveopt import batch\n"
        "outcomes = batch.run([('mv.cu', 'mv_opt.cu'), ('vv.cu', 'vv_opt.cu')],\n"
        "                     batch.Settings(), jobs=2, status_lines=False)\n"
        "print('STATUS', [(o.status, o.error) for o in outcomes])\n")
    done = _python(workdir, "batch_script.py")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "STATUS [('verified', None), ('verified', None)]" in done.stdout, \
        done.stdout + done.stderr[-3000:]
    assert (workdir / "mv_opt.cu").exists() and (workdir / "vv_opt.cu").exists()
