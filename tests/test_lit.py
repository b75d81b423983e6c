"""Run the lit + FileCheck tests in tests/lit, and make sure they cannot pass vacuously."""
from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest

from conftest import BIN_DIR, KERNELS_DIR, REPO
from naiveopt.passes.pipeline import canonicalization_pass_names, optimization_pass_names

LIT_DIR = os.path.join(REPO, "tests", "lit")
LIT = os.path.join(BIN_DIR, "lit")
#: Test files relative to tests/lit (lit finds them in subdirectories too: passes/, fuzz/,
#: canonicalize/).
LIT_TESTS = sorted(os.path.relpath(os.path.join(root, f), LIT_DIR)
                   for root, _, files in os.walk(LIT_DIR) for f in files
                   if f.endswith((".cu", ".cl")))

pytestmark = pytest.mark.skipif(not os.path.exists(LIT) or
                                not os.path.exists(os.path.join(BIN_DIR, "filecheck")),
                                reason="lit or filecheck not installed next to the interpreter")


def run_lit(suite_dir: str, exec_root: str, *extra: str, tests: list[str] | None = None
            ) -> subprocess.CompletedProcess:
    """lit over ``suite_dir``, or over ``tests`` (paths of some of its files)."""
    return subprocess.run([LIT, "-q", "--show-pass", "--param", f"exec_root={exec_root}",
                           *extra, *(tests or [suite_dir])], capture_output=True, text=True,
                          cwd=REPO, timeout=1500)


def _text(name: str) -> str:
    with open(os.path.join(LIT_DIR, name), encoding="utf-8") as fh:
        return fh.read()


def test_lit_tests_are_well_formed():
    assert len(LIT_TESTS) >= 6
    library = set(os.listdir(KERNELS_DIR))
    for name in LIT_TESTS:
        assert os.path.basename(name) not in library, f"{name} must not shadow a library kernel"
        text = _text(name)
        assert re.search(r"^// RUN: %naiveopt %s .*\| FileCheck %s", text, re.M), name
        assert re.search(r"^// CHECK(-NEXT)?: ", text, re.M), name


def test_every_optimization_pass_has_a_test_that_pins_it_firing():
    """Each pass of the pipeline is in some test's ``// NAME: passes: ...`` CHECK line (the
    output header lists the passes that fired), so a pass that stops firing fails a test."""
    fired = set()
    for name in LIT_TESTS:
        for line in re.findall(r"^// CHECK(?:-NEXT)?: // \w+: passes: (.*)$", _text(name), re.M):
            fired.update(re.findall(r"[a-z]+(?:-[a-z]+)*", line))
    missing = [p for p in optimization_pass_names() if p not in fired]
    assert not missing, f"no lit test checks that these passes fire: {missing}"


def test_every_canonicalization_pass_has_a_test_that_pins_it_rewriting():
    """Each canonicalization pass is in some test's CHECK line for its ``applied`` remark, so
    a pass that stops rewriting the form it is for fails a test."""
    fired = set()
    for name in LIT_TESTS:
        fired.update(re.findall(r"^// [A-Z]+(?:-NEXT)?: \w+: remark \[([a-z-]+)\] applied:",
                                _text(name), re.M))
    missing = [p for p in canonicalization_pass_names() if p not in fired]
    assert not missing, f"no lit test checks that these passes rewrite: {missing}"


#: The suite runs in chunks (every CHUNKS-th test), so that pytest-xdist spreads its five
#: minutes over the CI's cores instead of leaving one core to finish it alone.
CHUNKS = 4


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_lit_suite_passes(tmp_path, chunk):
    tests = LIT_TESTS[chunk::CHUNKS]
    done = run_lit(LIT_DIR, str(tmp_path / "exec"),
                   tests=[os.path.join(LIT_DIR, name) for name in tests])
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert f"Total Discovered Tests: {len(tests)}" in output, output
    passed = re.search(r"Passed Tests \((\d+)\)", output)
    assert passed and int(passed.group(1)) == len(tests), output
    assert not os.path.exists(os.path.join(LIT_DIR, "Output"))    # source tree left clean


def _copy_suite(tmp_path, name: str) -> str:
    suite = tmp_path / "suite"
    suite.mkdir()
    shutil.copy(os.path.join(LIT_DIR, "lit.cfg.py"), suite / "lit.cfg.py")
    shutil.copy(os.path.join(LIT_DIR, name), suite / name)
    return str(suite)


@pytest.mark.parametrize("name, old, new", [
    # a CHECK-NEXT line that no longer matches the next line
    ("paper_macro.cu", "// CHECK-NEXT: const int idy = get_global_id(1);",
     "// CHECK-NEXT: const int idy = get_global_id(0);"),
    # a CHECK-NOT that the rest of the output (the closing braces) violates
    ("opencl_to_cuda.cl", "// CHECK-NOT: barrier", "// CHECK-NOT: }"),
    # a plain CHECK for text that is not there
    ("preserved_define.cu", "// CHECK: B[i] = A[i] * SCALE + OFFSET;",
     "// CHECK: B[i] = A[i] * 3 + 7;"),
])
def test_broken_check_makes_lit_fail(tmp_path, name, old, new):
    suite = _copy_suite(tmp_path, name)
    path = os.path.join(suite, name)
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    assert text.count(old) == 1, f"{old!r} not in {name}"
    # the untouched copy passes: the failure below comes from the edit alone
    ok = run_lit(suite, str(tmp_path / "exec-ok"))
    assert ok.returncode == 0, ok.stdout + ok.stderr
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text.replace(old, new))
    done = run_lit(suite, str(tmp_path / "exec"))
    output = done.stdout + done.stderr
    assert done.returncode != 0, output
    assert f"FAIL: naiveopt :: {name}" in output or "Failed Tests (1)" in output, output
