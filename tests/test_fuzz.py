"""Differential fuzzing (naiveopt/fuzz): a seeded campaign of random naive kernels, each
optimized under random passes, targets and dialects and verified on PoCL against its input,
and the reduced miscompiles and crashes it found, kept as regression cases.

A longer campaign: ``python -m naiveopt.fuzz --cases 5000 --seed S`` (README, Testing).
"""
from __future__ import annotations

import glob
import os
import random
import re

import pytest

from naiveopt.fuzz.campaign import campaign, reduce, replay, run_case
from naiveopt.fuzz.generate import KernelGenerator, generate_case

from conftest import TESTS_DIR

REGRESSIONS = sorted(glob.glob(os.path.join(TESTS_DIR, "fuzz_regressions", "*.c[lu]")))

#: Cases the CI campaign runs, and its seed (fixed, so a failure reproduces exactly).
CI_CASES = int(os.environ.get("NAIVEOPT_FUZZ_CASES", "200"))
CI_SEED = int(os.environ.get("NAIVEOPT_FUZZ_SEED", "20261"))


def _regression_params() -> list:
    params = []
    for path in REGRESSIONS:
        with open(path, encoding="utf-8") as fh:
            xfail = re.search(r"^// XFAIL: (.*)$", fh.read(), re.MULTILINE)
        marks = [pytest.mark.xfail(strict=True, reason=xfail.group(1))] if xfail else []
        params.append(pytest.param(path, marks=marks, id=os.path.basename(path)))
    return params


@pytest.mark.parametrize("path", _regression_params())
def test_regression(path):
    """A reduced fuzz failure now optimizes, verifies, and does what its header says
    (``APPLIES: pass`` fires, ``REMARK: text`` is among the remarks)."""
    case = replay(path)
    outcome = run_case(case)
    assert outcome.kind == "passed", outcome.detail
    for name in re.findall(r"^// APPLIES: (\S+)$", case.source, re.MULTILINE):
        assert name in outcome.applied
    for text in re.findall(r"^// REMARK: (.*)$", case.source, re.MULTILINE):
        assert any(text in r for r in outcome.remarks), outcome.remarks


def test_generator_is_deterministic_and_varied():
    first = [generate_case(7, i, ["a", "b"], ("global",)) for i in range(30)]
    again = [generate_case(7, i, ["a", "b"], ("global",)) for i in range(30)]
    assert [c.source for c in first] == [c.source for c in again]
    assert len({c.source for c in first}) == 30
    assert {c.dialect for c in first} == {"cuda", "opencl"}
    assert {c.target for c in first} == {"cuda", "opencl"}
    assert {c.arch for c in first} == {"sm_90", "sm_80", "gfx90a"}
    text = "".join(c.source for c in first)
    for construct in ("for (", "if (", "return;", "#pragma naiveopt sizes(", "[j *", "+="):
        assert construct in text


def test_generated_writes_use_own_thread_ids():
    """Race freedom by construction: a written array's thread dimensions are indexed by the
    thread ids alone."""
    for seed in range(40):
        gen = KernelGenerator(random.Random(seed), "cuda")
        gen.file()
        for array in gen.arrays.values():
            if array.written:
                assert {d.owner for d in array.dims} >= {"i"}
            else:
                assert all(d.owner is None for d in array.dims)


def test_reduce_keeps_what_the_failure_needs():
    case = generate_case(3, 0, [], ("global",))
    lines = case.source.splitlines()
    keep = next(line for line in lines if "acc" in line and "=" in line).strip()
    reduced = reduce(case, None, lambda text: keep in text)
    assert keep in reduced
    assert len(reduced.splitlines()) < len(lines)
    assert reduced.count("{") == reduced.count("}")


#: The campaign is split into chunks so that pytest-xdist spreads it over the CI's cores.
CHUNKS = 4


@pytest.mark.fuzz
@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_fuzz_campaign(chunk):
    """The seeded CI campaign: no miscompile, no crash; nearly every case verifies (so the
    generator stays inside the supported subset) and the optimization passes fire."""
    count = -(-CI_CASES // CHUNKS)
    report = campaign(CI_SEED, count, start=chunk * count)
    failures = "\n\n".join(f"case {c.index}: {c.command()}\n{o.kind}: {o.detail}\n{c.source}"
                           for c, o in report.failures)
    assert not report.failures, f"{report.summary()}\n{failures}"
    assert report.counts["passed"] >= 0.9 * count, report.summary()
    assert sum(report.applied.values()) >= 0.3 * count, report.summary()
