"""Batches: parallel workers, input order, failures, crashes, Ctrl-C, measurements, the table."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from conftest import KERNEL_FILES, KERNELS_DIR, REPO, run_cli

from naiveopt.bench import BenchResult
from naiveopt.summary import table

BROKEN = "__global__ void k(float *A)\n{\n    A[0] = ;\n}\n"
MM_CU = os.path.join(KERNELS_DIR, "mm.cu")
MV_CU = os.path.join(KERNELS_DIR, "mv.cu")
VV_CU = os.path.join(KERNELS_DIR, "vv.cu")
linux_only = pytest.mark.skipif(not os.path.isdir("/proc/self"),
                                reason="needs /proc to find the worker processes")


def leftovers(directory) -> list[str]:
    """Temporary files write_atomically would leave if it were interrupted mid-write."""
    return [n for n in os.listdir(directory) if n.startswith(".naiveopt-")]


def status_lines(stderr: str) -> list[str]:
    return [ln for ln in stderr.splitlines() if ln.startswith("[")]


# ------------------------------------------------------------------ the acceptance batch
def test_library_plus_broken_file(tmp_path):
    """Every good kernel written and verified, the broken one reported, exit 1, the report
    written; messages and the JSON in input order although two workers ran."""
    broken = tmp_path / "broken.cu"
    broken.write_text(BROKEN)
    out, report = tmp_path / "OUT", tmp_path / "report.html"
    done = run_cli(KERNELS_DIR, broken, "-o", out, "--jobs", "2", "--report", report,
                   "--json", timeout=1800)
    assert done.returncode == 1, done.stderr[-3000:]
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr, \
        done.stderr[-3000:]
    summary = json.loads(done.stdout)
    assert summary["failed"] == 1
    inputs = KERNEL_FILES + [str(broken)]
    assert [f["input"] for f in summary["files"]] == inputs
    *good, bad = summary["files"]
    assert bad["output"] is None and "broken.cu:3:12: error: expected expression" in bad["error"]
    for f in good:
        assert f["verified"] is True, (f["input"], f["kernels"])
        with open(f["input"], encoding="utf-8") as fh:
            assert fh.read() != (out / os.path.basename(f["input"])).read_text()
    assert sorted(os.listdir(out)) == sorted(
        n for f in KERNEL_FILES for n in (os.path.basename(f), os.path.basename(f) + ".json")
        + ((os.path.basename(f) + ".h",) if f.endswith(".cl") else ()))
    # one status line per good file, in input order; the error once, after them
    lines = status_lines(done.stderr)
    assert lines == [f"[{i}/{len(inputs)}] {path} -> {out / os.path.basename(path)}: verified"
                     for i, path in enumerate(KERNEL_FILES, start=1)]
    errors = [ln for ln in done.stderr.splitlines() if "error:" in ln]
    assert errors == [f"{broken}:3:12: error: expected expression"]
    page = report.read_text()
    table_html = page[page.index('<table class="summary"'):]
    table_html = table_html[:table_html.index("</table>")]
    assert table_html.count("<tr>") == 1 + sum(len(f["kernels"]) for f in good) + 1
    assert "expected expression" in page and "ERROR" in page
    assert "%|" not in done.stderr            # no progress bar when stderr is not a terminal


def test_order_and_output_do_not_depend_on_jobs(tmp_path):
    files = [MM_CU, VV_CU, MV_CU]           # the slowest first: later ones finish earlier
    runs = {}
    for jobs in ("1", "3"):
        out = tmp_path / f"OUT{jobs}"
        done = run_cli(*files, "-o", out, "--jobs", jobs, "--no-verify", "--explain")
        assert done.returncode == 0, done.stderr
        runs[jobs] = (done.stdout, done.stderr.replace(str(out), "OUT"),
                      {n: (out / n).read_text() for n in sorted(os.listdir(out))})
    assert runs["1"] == runs["3"]
    stdout, stderr, outputs = runs["3"]
    assert [ln.split()[1] for ln in status_lines(stderr)] == files
    assert len(outputs) == 6
    # --explain remarks come grouped per file, in input order
    order = [ln.split(":")[0] for ln in stderr.splitlines() if not ln.startswith("[")]
    assert order == sorted(order, key=files.index)
    assert "input" in stdout and "mm.cu" in stdout       # the table, on stdout


def test_progress_bar_only_when_asked(tmp_path):
    forced = run_cli(MV_CU, VV_CU, "-o", tmp_path / "a", "--no-verify", "--progress")
    assert forced.returncode == 0, forced.stderr
    assert "100%|" in forced.stderr and "| 2/2 [" in forced.stderr
    assert len(status_lines(forced.stderr)) == 2       # written above the bar
    plain = run_cli(MV_CU, VV_CU, "-o", tmp_path / "b", "--no-verify")
    assert plain.returncode == 0 and "%|" not in plain.stderr
    assert len(status_lines(plain.stderr)) == 2


def test_jobs_must_be_positive():
    done = run_cli(MV_CU, "--jobs", "0")
    assert done.returncode == 2 and "positive integer" in done.stderr


# ---------------------------------------------------------------- crashes and Ctrl-C
def _children(pid: int) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", encoding="utf-8") as fh:
                stat = fh.read()
            with open(f"/proc/{name}/cmdline", "rb") as fh:
                cmdline = fh.read()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid and b"spawn_main" in cmdline:
            found.append(int(name))
    return found


def _busy_worker(proc: subprocess.Popen, timeout: float = 240) -> tuple[int, int]:
    """A pool worker of ``proc`` that is verifying (it has started its OpenCL worker), and
    that OpenCL worker."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.communicate()
        for worker in _children(proc.pid):
            for grandchild in _children(worker):
                return worker, grandchild
        time.sleep(0.02)
    raise AssertionError("no worker started verifying")


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _popen(*args, **kwargs) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "naiveopt.cli", *map(str, args)],
                            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, **kwargs)


@linux_only
def test_a_dying_worker_fails_only_its_file(tmp_path):
    out = tmp_path / "OUT"
    proc = _popen(MM_CU, MV_CU, "-o", out, "--jobs", "1")
    worker, _ = _busy_worker(proc)          # one worker: it is verifying mm.cu
    os.kill(worker, signal.SIGKILL)
    stdout, stderr = proc.communicate(timeout=600)
    assert proc.returncode == 1, stderr
    assert (f"{MM_CU}: internal error: the worker process was killed by SIGKILL "
            "(please report)") in stderr.splitlines()
    assert status_lines(stderr) == [f"[2/2] {MV_CU} -> {out / 'mv.cu'}: verified"]
    assert "Traceback" not in stderr
    assert sorted(os.listdir(out)) == ["mv.cu", "mv.cu.json"]
    assert "ERROR: " + MM_CU in stdout


@linux_only
def test_ctrl_c_stops_the_workers_and_leaves_no_partial_file(tmp_path):
    out = tmp_path / "OUT"
    proc = _popen(KERNELS_DIR, "-o", out, "--jobs", "2", start_new_session=True)
    worker, grandchild = _busy_worker(proc)
    os.killpg(proc.pid, signal.SIGINT)        # what the terminal sends to the job
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr
    assert "naiveopt: interrupted" in stderr and "Traceback" not in stderr
    assert stdout == ""
    written = os.listdir(out)
    assert not leftovers(out)
    assert len(written) < 2 * len(KERNEL_FILES)
    for name in written:                      # only complete outputs, each with its sidecar
        if not name.endswith(".json"):
            assert name + ".json" in written
            assert json.loads((out / (name + ".json")).read_text())["kernels"]
    deadline = time.monotonic() + 30
    while (_alive(worker) or _alive(grandchild)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(worker) and not _alive(grandchild)


# -------------------------------------------------------------- recorded measurements
def gpu_results(path, passes: dict[str, list[str]], arch="sm_90") -> str:
    """A GPU result file as bench/run.py writes it (rows from BenchResult.to_json())."""
    rows = [BenchResult(kernel, "NVIDIA H100", {"H": 4096, "W": 4096}, kernel_passes,
                        naive_s, naive_s / speedup, 4096 * 4096 * 4, None).to_json()
            for (kernel, kernel_passes), naive_s, speedup in
            zip(passes.items(), (2e-3, 1e-3), (4.0, 1.5))]
    doc = {"device": "NVIDIA H100", "date": "2025-01-01", "command": "bench/run.py",
           "arch": arch, "results": rows}
    path.write_text(json.dumps(doc))
    return str(path)


def test_bench_results_add_sectors_and_speedups(tmp_path):
    first = run_cli(MV_CU, VV_CU, "-o", tmp_path / "a", "--no-verify", "--json")
    assert first.returncode == 0, first.stderr
    passes = {f["kernels"][0]["name"]: f["kernels"][0]["passes"]
              for f in json.loads(first.stdout)["files"]}
    profile = tmp_path / "profile.json"
    profile.write_text(json.dumps({"arch": "sm_90", "command": "bench/run.py", "rows": [
        {"kernel": "mv", "passes": passes["mv"], "sizes": {"H": 1024, "W": 512},
         "naive_sectors": 540800.0, "optimized_sectors": 65920.0, "compulsory_sectors": 65600},
        {"kernel": "vv", "passes": passes["vv"] + ["thread-merge"], "sizes": {},
         "naive_sectors": 10.0, "optimized_sectors": 5.0}]}))
    gpu = gpu_results(tmp_path / "gpu.json", passes)
    old_gpu = gpu_results(tmp_path / "old.json", passes, arch="sm_80")
    done = run_cli(MV_CU, VV_CU, "-o", tmp_path / "b", "--no-verify", "--json",
                   "--bench-results", profile, "--bench-results", gpu,
                   "--bench-results", old_gpu)
    assert done.returncode == 0, done.stderr
    mv, vv = (f["kernels"][0] for f in json.loads(done.stdout)["files"])
    assert mv["sectors"] == {"naive": 540800.0, "optimized": 65920.0, "compulsory": 65600,
                             "sizes": {"H": 1024, "W": 512}, "from": str(profile)}
    (g,) = mv["gpu"]                          # the sm_80 file is not shown
    assert g["speedup"] == pytest.approx(4.0) and g["device"] == "NVIDIA H100"
    assert g["naive_ms"] == pytest.approx(2.0) and g["from"] == gpu
    assert any("taken for sm_80, not sm_90" in n for n in mv["measurement_notes"])
    assert "sectors" not in vv                # recorded with other passes than this run's
    assert any(f"this run applied [{', '.join(passes['vv'])}]" in n
               for n in vv["measurement_notes"])
    assert vv["gpu"][0]["speedup"] == pytest.approx(1.5)
    shown = run_cli(MV_CU, VV_CU, "-o", tmp_path / "c", "--no-verify",
                    "--bench-results", profile, "--bench-results", gpu)
    assert "540,800 -> 65,920 (8.20x)" in shown.stdout
    assert "4.00x (NVIDIA H100)" in shown.stdout and "1.50x (NVIDIA H100)" in shown.stdout


@pytest.mark.parametrize("content, message", [
    ("not json", "not a JSON file"),
    ('{"rows": [{"kernel": "mv"}]}', "a row lacks naive_sectors, optimized_sectors"),
    ('{"something": 1}', "expected a bench/run.py result file"),
    ('{"results": [{"kernel": "mv", "naive_ms": "1", "optimized_ms": 1, "speedup": 1}]}',
     "row 'mv': expected a name and numbers, got kernel='mv', naive_ms='1'")])
def test_bad_bench_results_fail_before_any_work(tmp_path, content, message):
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    out = tmp_path / "OUT"
    done = run_cli(MV_CU, VV_CU, "-o", out, "--bench-results", bad)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert f"{bad}: error: {message}" in done.stderr
    assert not out.exists() or not os.listdir(out)


def test_profile_adds_measured_sectors(tmp_path):
    done = run_cli(MV_CU, VV_CU, "-o", tmp_path / "OUT", "--profile", "-D", "H=128",
                   "-D", "W=96", "--json")
    assert done.returncode == 0, done.stderr
    mv, vv = (f["kernels"][0] for f in json.loads(done.stdout)["files"])
    assert mv["verified"] and mv["sectors"]["sizes"] == {"H": 128, "W": 96}
    assert mv["sectors"]["from"].startswith("naiveopt profile")
    # coalescing mv's row-per-thread reads moves fewer sectors
    assert mv["sectors"]["optimized"] < mv["sectors"]["naive"]
    # and the cost model estimates both launches at the same sizes on --arch
    est = mv["estimate"]
    assert est["sizes"] == {"H": 128, "W": 96} and est["arch"] == "sm_90"
    assert est["optimized"]["seconds"] < est["naive"]["seconds"]
    assert est["naive"]["bound"] in est["naive"]["times"]
    # the figures are naiveopt profile's
    alone = run_cli("profile", VV_CU, "--compare", "--json", "-D", "H=128", "-D", "W=96")
    assert alone.returncode == 0, alone.stderr
    (k,) = json.loads(alone.stdout)["kernels"]
    assert vv["sectors"]["naive"] == k["naive"]["totals"]["global_sectors"] > 0
    assert vv["sectors"]["optimized"] == k["optimized"]["totals"]["global_sectors"] > 0


def test_report_never_overwrites_an_input(tmp_path):
    src = tmp_path / "mv.cu"
    shutil.copy(MV_CU, src)
    before = src.read_text()
    done = run_cli(src, VV_CU, "-o", tmp_path / "OUT", "--no-verify", "--report", src)
    assert done.returncode == 1 and "refusing to overwrite the input file" in done.stderr
    assert src.read_text() == before
    assert not (tmp_path / "OUT").exists() or not os.listdir(tmp_path / "OUT")


# ---------------------------------------------------------------------- the table
def cells(line: str) -> list[str]:
    return [c.strip() for c in line.split("|")]


def _summary(**kernel_extra) -> dict:
    kernel = {"name": "mv", "passes": ["coalesce"], "resources": {"registers": 40},
              "verified": True, "verification": {"status": "passed", "detail": "", "checks": []},
              **kernel_extra}
    return {"failed": 1, "files": [
        {"input": "k/mv.cu", "target": "cuda", "kernels": [kernel], "output": "o/mv.cu"},
        {"input": "k/bad.cu", "output": None, "error": "k/bad.cu:3:12: error: expected x"}]}


def test_table_without_measurements_is_narrow():
    text = table(_summary())
    header, rule, row, bad, _, totals = text.splitlines()
    assert cells(header) == ["input", "kernel", "target", "passes", "regs", "verification"]
    assert cells(row) == ["k/mv.cu", "mv", "cuda", "coalesce", "40", "passed"]
    assert set(rule) == {"-", "+"} and rule.count("+") == 5
    assert "ERROR: k/bad.cu:3:12: error: expected x" in bad
    assert totals == "1/1 kernels verified, 1 file(s) failed"


def test_table_with_estimates():
    est = {"naive": {"seconds": 245.8e-6, "bound": "latency"},
           "optimized": {"seconds": 20.0e-6, "bound": "DRAM"}}
    text = table(_summary(sectors={"naive": 540800, "optimized": 65920}, estimate=est))
    header, _, row, bad, *_ = text.splitlines()
    assert cells(header)[-2:] == ["global sectors naive -> opt", "estimated time naive -> opt"]
    assert cells(row)[-1] == "245.8 us latency -> 20.0 us DRAM (12.29x)"
    assert cells(bad)[-1] == "-"


def test_table_with_sectors_and_speedups():
    text = table(_summary(sectors={"naive": 540800, "optimized": 65920},
                          gpu=[{"device": "H100", "speedup": 3.456}]))
    header, _, row, bad, *_ = text.splitlines()
    assert cells(header)[-2:] == ["global sectors naive -> opt", "GPU speedup"]
    assert cells(row)[-2:] == ["540,800 -> 65,920 (8.20x)", "3.46x (H100)"]
    assert cells(bad)[-2:] == ["-", "-"]
    assert header.index("| GPU") == row.index("| 3.46x") == bad.rindex("| -")   # aligned
