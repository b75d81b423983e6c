"""The pass manager's safety net: a pass that raises is a bug, reported and survived.

A pass that raises on a kernel must not take the file down nor leave a half-rewritten kernel:
the manager puts the kernel back as the passes before it left it, says so in a warning line
(``file: kernel: warning: pass P failed internally (please report): ...``), and counts it in the
JSON, the batch summary and the fuzzer. The suite runs with the net off
(NAIVEOPT_INTERNAL_ERRORS=raise in conftest.py); these tests turn it on.
"""
from __future__ import annotations

import json
import os

import pytest

from conftest import KERNELS_DIR
from naiveopt import cli
from naiveopt.api import optimize
from naiveopt.passes.manager import INTERNAL_ERRORS_ENV
from naiveopt.passes.optimize.thread_merge import ThreadMerge

MM = os.path.join(KERNELS_DIR, "mm.cu")


@pytest.fixture
def broken_thread_merge(monkeypatch):
    """Thread merge rewrites the kernel as usual, then raises: the worst case, a kernel left
    half-transformed."""
    monkeypatch.delenv(INTERNAL_ERRORS_ENV, raising=False)
    run = ThreadMerge.run

    def run_then_fail(self, proc, ctx):
        run(self, proc, ctx)
        raise IndexError("list index out of range")

    monkeypatch.setattr(ThreadMerge, "run", run_then_fail)


def source():
    with open(MM, encoding="utf-8") as fh:
        return fh.read()


def test_failed_pass_keeps_the_kernel_as_before_it(broken_thread_merge):
    result = optimize(source(), filename=MM)
    without = optimize(source(), filename=MM, options={"disable": ["thread-merge"]})
    assert [(e.pass_name, e.kernel) for e in result.internal_errors] == [("thread-merge", "mm")]
    assert "IndexError: list index out of range" in result.internal_errors[0].message
    assert result.internal_errors[0].where.startswith("manager.py:")   # naiveopt's own frame
    assert "thread-merge" not in result.kernels[0].passes
    assert result.kernels[0].passes == without.kernels[0].passes
    assert not any(r.pass_name == "thread-merge" for r in result.remarks)
    assert result.code == without.code
    assert result.verified
    assert result.internal_error_messages() == [
        f"{MM}: mm: warning: pass thread-merge failed internally (please report): "
        f"IndexError: list index out of range [{result.internal_errors[0].where}]"]
    assert result.to_json()["internal_errors"][0]["pass"] == "thread-merge"


def test_cli_warns_counts_and_still_writes(broken_thread_merge, tmp_path, capsys):
    out = tmp_path / "mm.opt.cu"
    assert cli.main([MM, "-o", str(out), "--json"]) == 0
    captured = capsys.readouterr()
    assert "mm: warning: pass thread-merge failed internally (please report)" in captured.err
    summary = json.loads(captured.out)
    assert summary["internal_errors"] == 1
    assert summary["files"][0]["internal_errors"][0]["kernel"] == "mm"
    assert out.exists()


def test_summary_table_counts_them():
    from naiveopt.summary import table

    summary = {"files": [], "failed": 0, "internal_errors": 2}
    assert "2 internal pass error(s) (please report)" in table(summary)


def test_fuzzer_counts_them_as_crashes(broken_thread_merge):
    from naiveopt.fuzz.campaign import cases, run_case

    for case in cases(7, 40):      # the first case where thread merge runs and so raises
        outcome = run_case(case)
        if "thread-merge failed internally" in outcome.detail:
            assert outcome.kind == "crash" and outcome.is_bug
            return
    pytest.fail("no fuzz case ran thread merge")


def test_the_suite_runs_with_the_net_off():
    assert os.environ.get(INTERNAL_ERRORS_ENV) == "raise"
    with pytest.raises(IndexError):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(ThreadMerge, "run", lambda self, proc, ctx: [][0])
            optimize(source(), filename=MM)
