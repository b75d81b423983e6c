"""naiveopt.launch_config: a Python host launches an output from its geometry, and gets the
naive kernel's results (pyopencl on PoCL), while a stale naive launch is refused."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

import naiveopt
from naiveopt.errors import NaiveoptError

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MM_CL = os.path.join(ROOT, "kernels", "naive", "mm.cl")


@pytest.fixture(scope="module")
def mm():
    with open(MM_CL, encoding="utf-8") as fh:
        source = fh.read()
    return source, naiveopt.optimize(source, filename=MM_CL, verify=False)


def test_launch_config_from_result_sidecar_and_json(mm, tmp_path):
    _, result = mm
    grid, block = naiveopt.launch_config(result, H=67, W=45, K=101)
    (k,) = result.kernels
    cover = [b * c for b, c in zip(k.geometry.block, k.geometry.coarsen)]
    assert list(block) == list(k.geometry.block)
    assert grid[0] == -(-45 // cover[0]) and grid[1] == -(-67 // cover[1]) and grid[2] == 1
    sidecar = tmp_path / "mm.cl.json"
    sidecar.write_text(json.dumps(result.launch_json()))
    assert naiveopt.launch_config(str(sidecar), "mm", H=67, W=45, K=101) == (grid, block)
    cfg = naiveopt.launch_config(result.launch_json(), H=67, W=45, K=101)
    assert cfg.global_size == tuple(g * b for g, b in zip(grid, block))


def test_launch_config_says_what_is_wrong(mm):
    _, result = mm
    with pytest.raises(NaiveoptError, match="no kernel 'nope'"):
        naiveopt.launch_config(result, "nope", H=1, W=1, K=1)
    with pytest.raises(NaiveoptError, match="cannot evaluate the launch of 'mm'.*'W'"):
        naiveopt.launch_config(result, H=64)


def test_launch_config_checks_an_unguarded_kernels_multiple():
    sidecar = {"kernels": {"k": {
        "block": [32, 8, 1], "grid_tree": [{"op": "ceil_div", "args": [{"var": "N"},
                                                                       {"const": 64}]},
                                           {"const": 1}, {"const": 1}],
        "thread_space": ["N", "1", "1"], "thread_space_multiple_of": [64, 1],
        "thread_space_tree": [{"var": "N"}, {"const": 1}, {"const": 1}]}}}
    assert naiveopt.launch_config(sidecar, N=128).grid == (2, 1, 1)
    with pytest.raises(NaiveoptError, match="multiple of that .x: 100 is not a multiple of 64"):
        naiveopt.launch_config(sidecar, N=100)


def test_pyopencl_host_gets_the_naive_results_and_a_stale_launch_is_refused(mm):
    """The optimized matmul launched with launch_config's sizes computes A @ B on PoCL; the
    naive 16x16 launch of it is refused by the runtime (reqd_work_group_size), not run."""
    cl = pytest.importorskip("pyopencl")
    _, result = mm
    H, W, K = 67, 45, 101
    rng = np.random.default_rng(3)
    a = rng.uniform(-1, 1, (H, K)).astype(np.float32)
    b = rng.uniform(-1, 1, (K, W)).astype(np.float32)
    ctx = cl.create_some_context(interactive=False)
    queue = cl.CommandQueue(ctx)
    mf = cl.mem_flags
    da = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a)
    db = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=b)
    c = np.zeros((H, W), np.float32)
    dc = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=c)
    kernel = cl.Kernel(cl.Program(ctx, result.code).build(), "mm")
    cfg = naiveopt.launch_config(result, H=H, W=W, K=K)
    kernel(queue, cfg.global_size, cfg.block, da, db, dc, np.int32(H), np.int32(W),
               np.int32(K))
    cl.enqueue_copy(queue, c, dc)
    assert np.allclose(c, a @ b, rtol=1e-4, atol=1e-4)
    with pytest.raises(cl.Error):
        kernel(queue, (-(-W // 16) * 16, -(-H // 16) * 16), (16, 16), da, db, dc,
                   np.int32(H), np.int32(W), np.int32(K))
        queue.finish()
