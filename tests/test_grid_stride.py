"""Grid-stride kernels on the user's launch (canonicalize/grid_stride.py): the loop made one
element per thread needs a launch of n threads, and users launch grid-stride kernels on a
fixed grid. Where no pass changes the launch the output is the loop again; where one does,
the launcher gives the launch and a stale one traps; where the form is gone, the block is
fixed so that the same holds."""
import numpy as np
import pyopencl as cl
import pytest

import naiveopt
from naiveopt.passes.functional.canonicalize import grid_stride

SCALE = """__global__ void scale(float *y, const float *x, float a, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        y[i] = a * x[i];
}
"""

PROGRAM = """#include <cuda_runtime.h>
""" + SCALE + """
int main() {
    int n = 1 << 20;
    float *x, *y;
    cudaMalloc(&x, n * 4); cudaMalloc(&y, n * 4);
    scale<<<32, 256>>>(y, x, 2.0f, n);
    cudaDeviceSynchronize();
    return 0;
}
"""


def _run_opencl(code: str, kernel: str, n: int, global_size: int, local_size: int):
    ctx = cl.create_some_context(interactive=False)
    queue = cl.CommandQueue(ctx)
    x = np.random.default_rng(1).random(n, dtype=np.float32)
    y = np.zeros(n, dtype=np.float32)
    mf = cl.mem_flags
    bx = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=x)
    by = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=y)
    program = cl.Program(ctx, code).build()
    getattr(program, kernel)(queue, (global_size,), (local_size,), by, bx, np.float32(2.0),
                             np.int32(n))
    cl.enqueue_copy(queue, y, by)
    return x, y


def test_an_output_no_pass_relaunches_runs_on_the_users_fixed_grid():
    """Was: the output took one element per thread while the host code's
    ``scale<<<32, 256>>>`` over a million elements stayed as written, so 8192 of them were
    computed and nothing said so. The loop is written back; run here on one work-group of 64
    over 1000 elements, every element is computed."""
    result = naiveopt.optimize(PROGRAM, filename="app.cu")
    assert result.verified and result.kernels[0].passes == []
    text = "\n".join(r.message for r in result.remarks if r.pass_name == "restore-grid-stride")
    assert "written back as the grid-stride loop over i" in text
    assert "for (int i = idx; i < n; i += blockDimX * gridDimX)" in result.code
    assert "scale<<<32, 256>>>(y, x, 2.0f, n);" in result.code
    opencl = naiveopt.optimize(SCALE, filename="scale.cu", target="opencl")
    x, y = _run_opencl(opencl.code, "scale", 1000, 64, 64)
    np.testing.assert_array_equal(y, np.float32(2.0) * x)


def test_a_relaunched_grid_stride_kernel_keeps_one_element_per_thread():
    """A pass that changes the launch (vectorize across threads on AMD) keeps the guarded
    form: the launcher's launch covers n, the stale fixed grid traps (CUDA) and host
    launches call the launcher."""
    result = naiveopt.optimize(PROGRAM, filename="app.cu", arch="gfx90a")
    (k,) = result.kernels
    assert result.verified and "vectorize" in k.passes, [r.message for r in result.remarks]
    text = "\n".join(r.message for r in result.remarks if r.pass_name == "restore-grid-stride")
    assert "a pass merged outputs into its threads: its block is fixed at 256x1" in text
    assert "__trap();" in result.code and "scale_launch_from(" in result.code
    assert "scale<<<32, 256>>>" not in result.code.split("int main()")[1]


def test_a_grid_stride_form_that_changed_fixes_the_launch(monkeypatch):
    """Where the guard is no longer the loop's (here: made unrecognisable), the output cannot
    be the loop again: its block is fixed, so the launcher gives the launch, host launches
    call it and a stale launch traps; it verifies."""
    monkeypatch.setattr(grid_stride, "_split_guard", lambda cond, loop_cond: None)
    result = naiveopt.optimize(PROGRAM, filename="app.cu")
    (k,) = result.kernels
    assert result.verified and k.geometry.block[0] == 256
    text = "\n".join(r.message for r in result.remarks if r.pass_name == "restore-grid-stride")
    assert "stays one element per thread (its form changed)" in text
    assert "its block is fixed at 256x1" in text
    assert "__trap();" in result.code and "scale_launch_from(" in result.code
    assert "if (i < n)" in result.code


@pytest.mark.parametrize("target", ["cuda", "opencl"])
def test_a_merged_guard_is_split_back_into_the_loop(target):
    """merge-guards joins the body's own test to the loop's guard (``i < n && x[i] > 0``):
    written back, the loop tests i < n and the body the rest."""
    source = """__global__ void relu(float *y, const float *x, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        if (x[i] > 0.0f)
            y[i] = x[i];
    }
}
"""
    result = naiveopt.optimize(source, filename="relu.cu", target=target)
    assert result.verified, [k.verification.detail for k in result.kernels]
    restored = [r.message for r in result.remarks if r.pass_name == "restore-grid-stride"]
    if result.kernels[0].passes:
        return                      # relaunched by a pass: the guarded form is right
    assert restored and "i += " in result.code


def test_verification_runs_an_unrelaunched_grid_stride_output_on_one_block(monkeypatch):
    """Verification checks such an output again on a launch of one block (the naive kernel
    on its full one): the loop written back matches; the one-element-per-thread form under
    the user's launch (the bug, restored here by switching the write-back off) fails."""
    result = naiveopt.optimize(SCALE, filename="scale.cu")
    assert result.verified
    assert "on one block of 256 threads (a grid-stride kernel's fixed grid): match" in \
        result.kernels[0].verification.detail
    from naiveopt.analysis.manager import PreservedAnalyses

    monkeypatch.setattr(grid_stride.RestoreGridStride, "run",
                        lambda self, proc, ctx: PreservedAnalyses.all())
    result = naiveopt.optimize(SCALE, filename="scale.cu", verify=True)
    (k,) = result.kernels
    assert k.verification.status == "failed", k.verification.detail
    assert k.verification.detail.startswith("on one block of 256 threads")
