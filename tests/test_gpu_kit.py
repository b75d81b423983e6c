"""The GPU benchmark kit: the bundle prepared on the CPU (naiveopt/gpu_bundle.py), bench/gpu.py
rehearsed on PoCL through the bundle's OpenCL translations (everything but the CUDA calls),
bench/merge.py, and one test per finding of the review of the old GPU path."""
from __future__ import annotations

import ast
import importlib.util
import json
import os
import shutil
import sys

import numpy as np
import pytest

import naiveopt
from conftest import KERNELS_DIR
from naiveopt.gpu_bundle import cublas_calls, moved_bytes, odd_size, prepare

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STEMS = ("mm", "mv_macro", "conv_macro", "gemm", "gesummv", "tmv", "vv", "strsm")


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, os.path.join(ROOT, "bench",
                                                                     f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


gpu = _load("gpu")
merge = _load("merge")


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("bundle"))
    doc = prepare([os.path.join(KERNELS_DIR, f"{s}.cu") for s in STEMS], out,
                  sets=("paper", "large", "odd", "test"))
    return out, doc


def _case(doc, case_id):
    return next(c for c in doc["cases"] if c["id"] == case_id)


def test_bundle_holds_numbers_and_sources_by_hash(bundle):
    out, doc = bundle
    assert not doc["failures"]
    assert doc["target"]["fp32_lanes_per_sm"] == 128
    mm = _case(doc, "mm:mm@paper")
    assert mm["sizes"] == {"H": 4096, "W": 4096, "K": 4096}
    assert mm["variants"]["naive"]["grid"] == [256, 256, 1]
    assert mm["variants"]["naive"]["block"] == [16, 16, 1]
    assert mm["variants"]["optimized"]["grid"] == [32, 32, 1]      # 128x128 register tiles
    assert mm["variants"]["optimized"]["block"] == [16, 16, 1]
    assert mm["flops"] == 2 * 4096 ** 3
    import hashlib
    for variant in mm["variants"].values():
        for dialect in ("cuda", "opencl"):
            code = variant[dialect]
            text = open(os.path.join(out, code["source"])).read()
            assert hashlib.sha256(text.encode()).hexdigest() == code["sha256"]
    # no data arrays travel: the whole bundle is small
    size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(out) for f in fs)
    assert size < 2 * 1024 * 1024


def test_finding_8_the_kernel_timed_is_the_kernel_shipped(bundle):
    """The GPU never re-runs the optimizer: the bundle's optimized CUDA is the text
    `naiveopt FILE -o OUT --no-launcher` writes (NVRTC compiles device code only), and the
    naive CUDA is the user's file."""
    out, doc = bundle
    path = os.path.join(KERNELS_DIR, "mm.cu")
    source = open(path).read()
    shipped = naiveopt.optimize(source, filename=path, launcher=False).code
    mm = _case(doc, "mm:mm@paper")
    assert open(os.path.join(out, mm["variants"]["optimized"]["cuda"]["source"])).read() \
        == shipped
    assert open(os.path.join(out, mm["variants"]["naive"]["cuda"]["source"])).read() == source


def test_paper_style_files_get_their_predefined_ids_and_macro_sizes(bundle):
    _, doc = bundle
    options = _case(doc, "mv_macro:mv_macro@paper")["variants"]["naive"]["cuda"]["options"]
    assert "-Didx=(blockIdx.x*blockDim.x+threadIdx.x)" in options
    assert "-DH=4096" in options and "-DW=4096" in options


def test_odd_sizes_miss_tiles_but_respect_unguarded_kernels(bundle):
    _, doc = bundle
    assert odd_size(4096) == 4031 and odd_size(512) == 447 and odd_size(5) == 5
    assert _case(doc, "mm:mm@odd")["sizes"] == {"H": 4031, "W": 4031, "K": 4031}
    # conv_macro has no bounds guard: at 4031 its naive kernel wrote past C (found on the
    # H100), so its thread space is rounded to a multiple of its 16x16 block
    sizes = _case(doc, "conv_macro:conv_macro@odd")["sizes"]
    assert sizes["H"] == sizes["W"] == 4016 and sizes["K"] == 5


def test_finding_9_large_sets_and_inout_bytes(bundle):
    _, doc = bundle
    gemm = _case(doc, "gemm:gemm_kernel@large")           # not only 512^3
    assert gemm["sizes"] == {"NI": 4096, "NJ": 4096, "NK": 4096}
    args = [{"name": "a", "role": "in", "dtype": "float32", "shape": [4, 8]},
            {"name": "c", "role": "inout", "dtype": "float32", "shape": [4, 4]},
            {"name": "n", "role": "size", "dtype": "int32", "value": 4}]
    assert moved_bytes(args) == 4 * 8 * 4 + 2 * 4 * 4 * 4
    assert gemm["bytes"] == 4 * 4096 * 4096 * 4      # a, b read; c read and written


def test_finding_7_cublas_calls_are_blas_calls_read_off_the_reference(bundle):
    _, doc = bundle
    mm = _case(doc, "mm:mm@paper")["cublas"]
    assert [(c["call"], c["m"], c["n"], c["k"]) for c in mm] == [("sgemm", 4096, 4096, 4096)]
    (tmv,) = _case(doc, "tmv:tmv@paper")["cublas"]
    assert (tmv["call"], tmv["trans"]) == ("sgemv", "T")
    (vv,) = _case(doc, "vv:vv@paper")["cublas"]
    assert vv["call"] == "sger"                              # not cp.outer
    # tmp = a @ x and y = alpha * (a @ x) + beta * (b @ x): two SGEMV, not three
    assert len(_case(doc, "gesummv:gesummv_kernel@paper")["cublas"]) == 2
    assert _case(doc, "strsm:strsm@paper")["cublas"] == []
    args = [{"name": "A", "role": "in", "dtype": "float32", "shape": [6, 5]},
            {"name": "x", "role": "in", "dtype": "float32", "shape": [6]}]
    (call,) = cublas_calls({"y": "x @ A"}, args)
    assert (call["call"], call["trans"], call["rows"], call["cols"]) == ("sgemv", "T", 6, 5)


def test_finding_2_gpu_side_imports_numpy_and_cupy_only():
    """The GPU machines have numpy and cupy but none of naiveopt's dependencies."""
    tree = ast.parse(open(os.path.join(ROOT, "bench", "gpu.py")).read())
    allowed = set(sys.stdlib_module_names) | {"numpy", "cupy", "pyopencl"}
    for node in ast.walk(tree):
        names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                 [node.module] if isinstance(node, ast.ImportFrom) and node.module else [])
        for name in names:
            assert name.split(".")[0] in allowed, name
    assert os.environ.get("CUPY_TF32") == "0"               # set before cupy is imported


def test_finding_6_inputs_come_from_one_generator(bundle):
    _, doc = bundle
    a, b, *_ = gpu.make_host_args(_case(doc, "mm:mm@test"), 7)
    assert a.shape == (64 * 32,) and b.shape == (32 * 48,)
    assert not np.array_equal(a[:1000], b[:1000])
    again = gpu.make_host_args(_case(doc, "mm:mm@test"), 7)
    assert np.array_equal(a, again[0])                       # seeded: repeatable


def test_compare_finds_wrong_and_unwritten_elements():
    want = np.array([1.0, 2.0, np.nan, 4.0], dtype=np.float32)
    assert gpu.compare(want, want.copy())["mismatches"] == 0
    wrong = want.copy()
    wrong[1] = 2.5
    result = gpu.compare(want, wrong)
    assert result["mismatches"] == 1 and result["first_mismatch"]["index"] == 1
    unwritten = want.copy()
    unwritten[3] = np.nan                                    # the optimized kernel skipped it
    assert gpu.compare(want, unwritten)["mismatches"] == 1
    assert gpu.compare(np.array([1, 2]), np.array([1, 3]))["mismatches"] == 1


def test_rehearsal_on_pocl_checks_times_and_writes_a_line_per_case(bundle, tmp_path):
    """bench/gpu.py end to end through the OpenCL translations, at the test sizes."""
    src, doc = bundle
    out = tmp_path / "run"
    code = gpu.main([src, "--out", str(out), "--backend", "opencl", "--sets", "test"])
    assert code == 0
    lines = [json.loads(x) for x in open(out / "results.jsonl")]
    assert lines[0]["record"] == "run" and lines[0]["backend"] == "opencl"
    cases = lines[1:]
    assert len(cases) == len([c for c in doc["cases"] if c["size_set"] == "test"])
    for row in cases:
        assert row["status"] == "ok", row
        assert row["verification"] == "passed"
        assert row["naive_ms"] > 0 and row["optimized_ms"] > 0 and row["bytes"] > 0
    merged = tmp_path / "merged"
    assert merge.main([str(out / "results.jsonl"), "--out", str(merged), "--profile", ""]) == 0
    (md,) = [p for p in merged.iterdir() if p.suffix == ".md"]
    assert "mm:mm@test" in md.read_text()


def test_finding_3_one_failing_case_does_not_lose_the_run(bundle, tmp_path):
    src, doc = bundle
    broken = tmp_path / "bundle"
    shutil.copytree(src, broken)
    mm = _case(doc, "mm:mm@test")
    with open(broken / mm["variants"]["optimized"]["opencl"]["source"], "w") as fh:
        fh.write("__kernel void mm(__global float *A) { this is not C }\n")
    out = tmp_path / "out"
    assert gpu.main([str(broken), "--out", str(out), "--backend", "opencl", "--sets", "test",
                     "--only", "mm,vv", "--no-timing"]) == 1
    rows = {r["id"]: r for r in map(json.loads, open(out / "results.jsonl"))
            if r.get("record") == "case"}
    assert rows["mm:mm@test"]["status"] == "error"
    assert rows["mm:mm@test"]["phase"] == "compile optimized"
    assert rows["vv:vv@test"]["status"] == "checked"
    assert rows["vv:vv@test"]["verification"] == "passed"


class _FakeCupy:
    """Just enough of cupy for CudaBackend.time_call, recording what runs between events."""

    def __init__(self, log):
        log_ = log

        class Event:
            def record(self, stream=None):
                log_.append("record")

            def synchronize(self):
                pass

        class Graph:
            def launch(self, stream=None):
                log_.append("graph")

        class Stream:
            def __enter__(self):
                return self

            def __exit__(self, *exc):
                return False

            def synchronize(self):
                pass

            def begin_capture(self):
                log_.append("begin")

            def end_capture(self):
                log_.append("end")
                return Graph()

        class Cuda:
            pass

        self.cuda = Cuda()
        self.cuda.Event = Event
        self.cuda.get_elapsed_time = lambda a, b: 0.5
        self.stream = Stream()


def test_finding_4_timed_events_hold_only_graph_replays():
    """The old runner recorded the start event, then packed arguments and launched: host
    latency was inside every sample. Now calls are captured into a graph first, and only
    graph replays run between the two events of a sample."""
    log: list[str] = []
    fake = _FakeCupy(log)
    backend = gpu.CudaBackend.__new__(gpu.CudaBackend)
    backend.cp, backend.stream = fake, fake.stream
    result = backend.time_call(lambda: log.append("call"))
    timed = log[log.index("end"):]
    starts = [i for i, x in enumerate(timed) if x == "record"]
    assert len(starts) == 2 * gpu.REPLAYS
    for start, stop in zip(starts[::2], starts[1::2]):
        assert timed[start + 1:stop] == ["graph"]
    assert "call" not in timed                     # every call happened before or in capture
    n = int(result["method"].split("of ")[1].split(" ")[0])
    assert result["s"] == pytest.approx(0.5e-3 / n)


def test_cli_prepares_the_whole_library(tmp_path, capsys):
    """`naiveopt bench --prepare DIR` over kernels/naive (the default), as a lent GPU needs
    it: every file prepared, every case with numbers, progress on stderr."""
    from naiveopt.cli import main

    out = tmp_path / "bundle"
    assert main(["bench", "--prepare", str(out), KERNELS_DIR]) == 0
    captured = capsys.readouterr()
    files = sorted(f for f in os.listdir(KERNELS_DIR) if f.endswith(".cu"))
    assert f"[{len(files)}/{len(files)}]" in captured.err
    doc = json.load(open(out / "bundle.json"))
    assert not doc["failures"] and doc["sets"] == ["paper", "large", "odd", "profile"]
    assert {c["file"] for c in doc["cases"]} == set(files)
    for case in doc["cases"]:
        assert not case.get("skip"), case["id"]
        for variant in case["variants"].values():
            assert all(g > 0 for g in variant["grid"]) and variant["cuda"]["sha256"]


def test_cli_prepare_reports_bad_input_located(tmp_path, capsys):
    from naiveopt.cli import main

    bad = tmp_path / "bad.cu"
    bad.write_text("__global__ void bad(float *a) { a[0] = ; }\n")
    assert main(["bench", "--prepare", str(tmp_path / "b"), str(bad)]) == 1
    assert f"{bad}:1:40: error:" in capsys.readouterr().err
    assert main(["bench", "--prepare", str(tmp_path / "b"),
                 os.path.join(KERNELS_DIR, "mm.cl")]) == 1


def test_merge_keeps_results_replaces_failures_and_measures_repeats():
    ok = {"id": "k@paper", "status": "ok", "sizes": {"N": 8}, "naive_ms": 2.0,
          "optimized_ms": 1.0, "file": "k.cu"}
    rows = merge.merge_cases([
        {"id": "k@paper", "status": "error", "sizes": {"N": 8}, "error": "lost context"},
        ok,
        {**ok, "naive_ms": 2.1, "optimized_ms": 1.0},                    # a repeat
        {"id": "m@odd", "status": "ok", "verification": "failed", "sizes": {"N": 7},
         "naive_ms": 1.0, "optimized_ms": 1.0, "file": "m.cu"},
        {"id": "m@odd", "status": "ok", "verification": "passed", "sizes": {"N": 4},
         "naive_ms": 1.0, "optimized_ms": 1.0, "file": "m.cu"},          # a later bundle
    ])
    k, m = rows
    assert k["status"] == "ok" and k["earlier"][0]["error"] == "lost context"
    assert k["repeat_difference"] == pytest.approx(0.05) and k["file"] == "k"
    assert m["verification"] == "passed" and m["sizes"] == {"N": 4}


def test_ablation_variants_measure_what_each_pass_buys(tmp_path):
    """--ablate: per applied pass a variant compiled without it, checked against the naive
    kernel and timed like the others; merge turns them into 'what each pass buys'."""
    out = tmp_path / "bundle"
    doc = prepare([os.path.join(KERNELS_DIR, "mm.cu")], str(out), sets=("test",), ablate=True)
    (case,) = doc["cases"]
    assert set(case["variants"]) == {"naive", "optimized"} | {
        f"without-{p}" for p in case["passes"]}
    without = case["variants"]["without-thread-merge"]
    assert "thread-merge" not in without["passes"] and without["grid"] != \
        case["variants"]["optimized"]["grid"]
    run = tmp_path / "run"
    assert gpu.main([str(out), "--out", str(run), "--backend", "opencl"]) == 0
    (row,) = [r for r in map(json.loads, open(run / "results.jsonl")) if r["record"] == "case"]
    assert set(row["ablation_verification"].values()) == {"passed"}
    assert all(row[f"without-{p}_ms"] > 0 for p in case["passes"])
    assert merge.main([str(run / "results.jsonl"), "--out", str(tmp_path / "m"),
                       "--profile", ""]) == 0
    (md,) = (tmp_path / "m").glob("*.md")
    assert "## What each pass buys" in md.read_text()


def test_a_kernel_given_a_bounds_guard_gets_its_size_argument(tmp_path):
    """mm_macro has no bounds guard; its register-tiled output gains one and a parameter for
    HEIGHT_A (tiling/bounds_guard.py): the bundle says what to pass after the case's
    arguments, and bench/gpu.py passes it (rehearsed on PoCL at the test sizes)."""
    out = str(tmp_path / "bundle")
    doc = prepare([os.path.join(KERNELS_DIR, "mm_macro.cu")], out, sets=("test",))
    case = _case(doc, "mm_macro:mm_macro@test")
    assert case["variants"]["naive"]["size_args"] == []
    assert case["variants"]["optimized"]["size_args"] == [case["sizes"]["HEIGHT_A"]]
    run = tmp_path / "run"
    assert gpu.main([out, "--out", str(run), "--backend", "opencl", "--sets", "test"]) == 0
    (row,) = [json.loads(x) for x in open(run / "results.jsonl")][1:]
    assert row["status"] == "ok" and row["verification"] == "passed", row
