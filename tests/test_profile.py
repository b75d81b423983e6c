"""naiveopt profile against cases worked out by hand (sectors, bank conflicts, sampling)."""
import json
import os
import subprocess
import sys

import pytest

from conftest import unsplit
from naiveopt.profile import profile_file

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HEADER = "#pragma naiveopt sizes(N=32) array(A, N, N) array(B, N) threads(N) block(32)\n"


def site(src, access, name="k.cl", **kw):
    (prof,) = profile_file(HEADER + src, name, **kw)
    return next(s for s in prof.sites if s.site.text == access), prof


def test_coalesced_row_read_is_4_sectors_per_request():
    s, prof = site("__kernel void k(__global const float *A, __global float *B, int N) {"
                   " int i = get_global_id(0); B[i] = A[2 * N + i]; }", "A[2 * N + i]")
    assert s.requests == 1 and s.sectors == 4
    assert prof.totals.compulsory_sectors == 4 + 4          # A's row and B


def test_sector_size_and_warp_size_are_the_targets():
    # gfx90a: 64-byte lines, 64-lane wavefronts; the 32 threads' row of floats is 2 lines
    s, prof = site("__kernel void k(__global const float *A, __global float *B, int N) {"
                   " int i = get_global_id(0); B[i] = A[2 * N + i]; }", "A[2 * N + i]",
                   arch="gfx90a")
    assert s.requests == 1 and s.sectors == 2
    assert prof.totals.compulsory_sectors == 2 + 2


def test_accesses_are_sized_by_their_element_type():
    # a row of 32 unsigned chars is one 32-byte sector (not 32 four-byte words)
    s, prof = site("__kernel void k(__global const uchar *A, __global uchar *B, int N) {"
                   " int i = get_global_id(0); B[i] = A[2 * N + i]; }", "A[2 * N + i]")
    assert s.requests == 1 and s.sectors == 1
    assert prof.totals.compulsory_sectors == 1 + 1


def test_column_read_is_32_sectors_per_request():
    s, _ = site("__kernel void k(__global const float *A, __global float *B, int N) {"
                " int i = get_global_id(0); B[i] = A[i * N]; }", "A[i * N]")
    assert s.requests == 1 and s.sectors == 32


def test_broadcast_is_1_sector_per_request():
    s, _ = site("__kernel void k(__global const float *A, __global float *B, int N) {"
                " int i = get_global_id(0); B[i] = A[5]; }", "A[5]")
    assert s.requests == 1 and s.sectors == 1


TILE = """__kernel void k(__global const float *A, __global float *B, int N) {
    __local float t[32][PITCH];
    int x = get_local_id(0);
    for (int r = 0; r < 32; r++) t[r][x] = A[r * 32 + x];
    barrier(CLK_LOCAL_MEM_FENCE);
    B[x] = t[x][0];
}"""


@pytest.mark.parametrize("pitch,conflicts", [(32, 31), (33, 0)])
def test_shared_tile_read_by_column(pitch, conflicts):
    read, prof = site(TILE.replace("PITCH", str(pitch)), "t[x][0]")
    assert read.requests == 1
    assert read.bank_conflicts == conflicts            # 32-way: 31 extra wavefronts
    write = next(s for s in prof.sites if s.site.text == "t[r][x]")
    assert write.requests == 32 and write.bank_conflicts == 0


def test_warps_split_requests_and_instances_group_lanes():
    src = ("#pragma naiveopt sizes(N=64) array(A, N, N) array(B, N) threads(N) block(64)\n"
           "__kernel void k(__global const float *A, __global float *B, int N) {"
           " int i = get_global_id(0); float s = 0; for (int j = 0; j < 4; j++)"
           " s += A[j * N + i]; B[i] = s; }")
    (prof,) = profile_file(src, "k.cl")
    a = next(s for s in prof.sites if s.site.text == "A[j * N + i]")
    assert a.requests == 2 * 4 and a.sectors == 2 * 4 * 4   # 2 warps x 4 instances x 4


def test_sampling_scales_to_the_whole_launch():
    src = ("#pragma naiveopt sizes(N=1024) array(A, N) array(B, N) threads(N) block(32)\n"
           "__kernel void k(__global const float *A, __global float *B, int N) {"
           " int i = get_global_id(0); B[i] = A[i]; }")
    (full,) = profile_file(src, "k.cl", max_blocks=64)
    (sampled,) = profile_file(src, "k.cl", max_blocks=4)
    assert full.sampled_blocks == 32 and sampled.sampled_blocks == 4
    assert full.totals.global_sectors == sampled.totals.global_sectors == 2 * 1024 * 4 / 32
    assert sampled.totals.compulsory_sectors == 2 * 1024 * 4 / 32


def test_naive_mv_against_its_optimized_output():
    path = os.path.join(ROOT, "kernels", "naive", "mv.cu")
    src = open(path).read()
    (naive,) = profile_file(src, path)
    (opt,) = profile_file(src, path, opt=True, options=unsplit())     # the coalesced output
    a = next(s for s in naive.sites if s.site.text.startswith("A["))
    assert a.sectors / a.requests == 32                      # a column per warp
    assert opt.totals.global_sectors <= 1.25 * opt.totals.compulsory_sectors
    assert naive.totals.global_sectors >= 7 * opt.totals.global_sectors
    assert opt.totals.shared_bank_conflicts == 0
    assert opt.totals.occupancy is not None


def test_profile_cli_compare_json():
    done = subprocess.run([sys.executable, "-m", "naiveopt.cli", "profile",
                           os.path.join(ROOT, "kernels", "naive", "transpose.cu"),
                           "--compare", "--json"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    (k,) = json.loads(done.stdout)["kernels"]
    for variant in ("naive", "optimized"):
        totals = k[variant]["totals"]
        for key in ("global_sectors", "compulsory_sectors", "shared_bank_conflicts",
                    "occupancy"):
            assert key in totals
    assert k["optimized"]["totals"]["global_sectors"] < k["naive"]["totals"]["global_sectors"]


def test_profile_cli_errors_cleanly_without_sizes(tmp_path):
    f = tmp_path / "k.cu"
    f.write_text("__global__ void k(float *A) { A[threadIdx.x] = 1.0f; }\n")
    done = subprocess.run([sys.executable, "-m", "naiveopt.cli", "profile", str(f)],
                          capture_output=True, text=True)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "sizes" in done.stderr


def test_bench_times_naive_and_optimized_on_the_opencl_device():
    done = subprocess.run([sys.executable, "-m", "naiveopt.cli", "bench",
                           os.path.join(ROOT, "kernels", "naive", "mm.cu"), "--device",
                           "opencl", "--sizes", "test", "--json"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    (r,) = json.loads(done.stdout)
    assert r["kernel"] == "mm" and r["naive_ms"] > 0 and r["optimized_ms"] > 0
    assert r["speedup"] == pytest.approx(r["naive_ms"] / r["optimized_ms"])
    assert r["optimized_gflops"] > 0 and "thread-block-merge" in r["passes"]


def test_bench_takes_the_median_of_at_least_20_runs(monkeypatch):
    from naiveopt import bench

    seen = []
    real = bench.opencl.time_kernel

    def spy(*args, **kwargs):
        times = real(*args, **kwargs)
        seen.append((args[-1] if len(args) > 7 else kwargs.get("runs"), len(times)))
        return [float(i) for i in range(len(times))]   # median of 0..n-1 is (n-1)/2

    monkeypatch.setattr(bench.opencl, "time_kernel", spy)
    path = os.path.join(ROOT, "kernels", "naive", "vv.cu")
    (r,) = bench.bench_file(open(path).read(), path, device="opencl", size_set="test", runs=3)
    assert seen == [(20, 20), (20, 20)]               # raised to the minimum of 20 runs
    assert r.naive_s == r.optimized_s == 9.5


@pytest.mark.parametrize("command", ["profile", "bench"])
def test_measuring_commands_report_unreadable_input_cleanly(command, tmp_path):
    f = tmp_path / "k.cu"
    f.write_bytes(b"\xad\xff\x00garbage")
    done = subprocess.run([sys.executable, "-m", "naiveopt.cli", command, str(f)],
                          capture_output=True, text=True)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert f"{f}: error: the file is not UTF-8 text" in done.stderr


def test_reads_inside_helper_functions_are_traced():
    """A read through a helper (`pixel(raw, y, x)`) is an access of the array the helper
    receives: a column read there is 32 sectors a request, as in the kernel. The profiler
    traced none of them (demosaic: stores only, 0.2x of Nsight Compute's sectors on an
    H100). The helper loops, so that it stays a call (inline-helpers writes out the ones that
    are one expression)."""
    helper = ("float at(__global const float *p, int i, int N) { float s = 0.0f;"
              " for (int k = 0; k < 1; k++) s += p[i * N]; return s; }\n"
              "__kernel void k(__global const float *A, __global float *B, int N) {"
              " int i = get_global_id(0); B[i] = at(A, i, N) + at(A, i, N); }")
    (prof,) = profile_file(HEADER + helper, "k.cl")
    (s,) = [s for s in prof.sites if s.site.text == "p[i * N]"]
    assert s.site.array == "A" and s.site.is_load
    assert s.requests == 2 and s.sectors == 64              # two calls, one column read each
    # a pointer that receives different arrays at different calls is not attributed
    mixed = helper.replace("at(A, i, N) + at(A, i, N)", "at(A, i, N) + at(B, i, N)")
    (prof,) = profile_file(HEADER + mixed, "k.cl")
    assert not [s for s in prof.sites if s.site.text == "p[i * N]"]


def test_demosaic_profile_counts_its_reads():
    path = os.path.join(ROOT, "kernels", "naive", "demosaic.cu")
    (prof,) = profile_file(open(path).read(), path)
    loads = sum(s.sectors for s in prof.sites if s.site.is_load)
    assert loads > 3 * sum(s.sectors for s in prof.sites if s.site.is_store)
