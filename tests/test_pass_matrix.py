"""Every optimization pass on and off, on every kernel of the library.

For each kernel file and target description, the default pipeline runs first; then each pass
that fired is switched off (``--disable-pass``) and the result must still verify on PoCL at a
multiple and an odd size, without that pass. The dialect alternates between files (both
dialects are covered across the library; tests/test_optimize.py runs every file in both with
all passes on). Every optimization pass must leave a remark for every kernel either way.
"""
from __future__ import annotations

import os

import pytest

import naiveopt
from naiveopt.passes.pipeline import optimization_pass_names
from conftest import KERNELS_DIR

FILES = sorted(f for f in os.listdir(KERNELS_DIR) if f.endswith((".cu", ".cl")))


def run(name: str, **kw) -> naiveopt.OptimizeResult:
    path = os.path.join(KERNELS_DIR, name)
    with open(path) as fh:
        return naiveopt.optimize(fh.read(), filename=path, **kw)


def check(result, switched_off: str | None) -> None:
    for k in result.kernels:
        assert k.verification.status == "passed", (k.name, switched_off, k.verification.detail)
        assert [c.split()[0] for c in k.verification.checks] == ["test", "odd"]
        assert switched_off not in k.passes
        said = {r.pass_name for r in result.remarks if r.kernel == k.name}
        missing = set(optimization_pass_names()) - said
        assert not missing, f"{k.name}: no remark from {sorted(missing)}"


@pytest.mark.parametrize("arch", ["sm_90", "gfx90a"])
@pytest.mark.parametrize("name", FILES)
def test_each_pass_that_fires_can_be_switched_off(name, arch):
    target = ("cuda", "opencl")[(FILES.index(name) + (arch == "gfx90a")) % 2]
    base = run(name, arch=arch, target=target)
    check(base, None)
    fired = sorted({p for k in base.kernels for p in k.passes})
    for p in fired:
        result = run(name, arch=arch, target=target, options={"disable": [p]})
        check(result, p)
        assert any(r.pass_name == p and r.message == "disabled (--disable-pass)"
                   for r in result.remarks)
