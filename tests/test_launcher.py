"""naiveopt.launch_config: a Python host launches an output from its geometry, and gets the
naive kernel's results (pyopencl on PoCL), while a stale naive launch is refused."""
from __future__ import annotations

import json
import re
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


# ----------------------------------------------------------------- CUDA launcher functions
import subprocess  # noqa: E402

from conftest import KERNEL_FILES, nvcc  # noqa: E402

CUDA_LIBRARY = [f for f in KERNEL_FILES if f.endswith(".cu")]

PROGRAM = """
#include <cstdio>
#include <cuda_runtime.h>
__global__ void mm(const float *A, const float *B, float *C, int H, int W, int K)
{
    int col = threadIdx.x + blockIdx.x * blockDim.x;
    int row = threadIdx.y + blockIdx.y * blockDim.y;
    if (row < H && col < W) {
        float sum = 0.0f;
        for (int k = 0; k < K; k++) sum += A[row * K + k] * B[k * W + col];
        C[row * W + col] = sum;
    }
}
int main()
{
    int H = 100, W = 60, K = 30;
    float *A, *B, *C;
    cudaMallocManaged(&A, H * K * sizeof(float));
    cudaMallocManaged(&B, K * W * sizeof(float));
    cudaMallocManaged(&C, H * W * sizeof(float));
    cudaStream_t s;
    cudaStreamCreate(&s);
    cudaError_t err = mm_launch(A, B, C, H, W, K, s);
    cudaStreamSynchronize(s);
    printf("%s %f\\n", cudaGetErrorString(err), C[0]);
    return 0;
}
"""


def test_launcher_follows_the_kernel_and_no_launcher_leaves_it_out():
    with open(os.path.join(ROOT, "kernels", "naive", "mm.cu"), encoding="utf-8") as fh:
        source = fh.read()
    result = naiveopt.optimize(source, filename="mm.cu", verify=False)
    (k,) = result.kernels
    head = result.code.index("mm_launch(")
    assert result.code.index("void __launch_bounds__") < head
    launcher = result.code[head:]
    assert "cudaStream_t stream = 0" in launcher
    grid = ", ".join(k.geometry.grid)
    assert f"dim3 grid({grid})" in " ".join(launcher.split())
    assert "mm<<<grid, block, 0, stream>>>(A, B, C, H, W, K);" in launcher
    bare = naiveopt.optimize(source, filename="mm.cu", verify=False, launcher=False)
    assert "_launch(" not in bare.code


CAST_GUARDS = """
__global__ void blur_row(const float *in, float *out, size_t w, size_t h)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= (long)w || (size_t)y >= h)
        return;
    out[y * w + x] = in[y * w + x] * 0.5f;
}

__global__ void head(float *a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < (int)sqrtf((float)n))
        a[i] = 0.0f;
}
"""


def test_guards_through_integer_casts_give_the_sizes_and_the_launcher_takes_no_type_word():
    result = naiveopt.optimize(CAST_GUARDS, filename="casts.cu", verify=False)
    blur, head = result.kernels
    assert blur.geometry.thread_space[:2] == ("w", "h")
    assert head.geometry.thread_space[0] == "sqrtf((float) n)"
    launchers = result.code[result.code.index("blur_row_launch("):]
    # the geometry's cast and call name no size: the launchers take the kernels' own
    # parameters only (a type word there, ``int long``, did not compile)
    assert "blur_row_launch(const float *in, float *out, size_t w, size_t h, cudaStream_t" \
        in " ".join(launchers.split())
    assert re.search(r"head_launch\(float \*a, int n,\s*cudaStream_t", launchers)
    assert not re.search(r"int (long|float|sqrtf)\b", launchers)


def test_launcher_checks_the_multiple_an_unguarded_kernel_needs():
    """An unguarded output whose coverage its naive block does not divide relies on a
    thread-space multiple: its launcher refuses other sizes; a size the kernel does not take
    (the paper's free thread space) becomes a parameter."""
    from naiveopt.api import compile_module
    from naiveopt.frontend import parse_unit
    from naiveopt.launch import LaunchGeometry
    from naiveopt.launcher import cuda_launcher

    path = os.path.join(ROOT, "kernels", "naive", "mm_macro.cu")
    with open(path, encoding="utf-8") as fh:
        c = compile_module(parse_unit(path, fh.read(), {}), None, "sm_90", False)
    (proc,) = c.module.procedures
    geo = LaunchGeometry((32, 16), (2, 1), ("WIDTH_B", "HEIGHT_A"), (64, 16))
    text = " ".join(cuda_launcher(proc, geo, c.module.macros).split())
    assert "mm_macro_launch(float *A, float *B, float *C, int naiveopt_HEIGHT_A, " \
        "cudaStream_t stream = 0)" in text
    assert "if ((WIDTH_B) % 64 != 0 || (naiveopt_HEIGHT_A) % 16 != 0) {" in text
    # refused with a launch the runtime rejects, so the error is pending as for <<<>>>
    assert "mm_macro<<<dim3(0), dim3(32, 16, 1), 0, stream>>>(A, B, C);" in text
    assert text.count("return cudaPeekAtLastError();") == 2


@nvcc
@pytest.mark.parametrize("path", CUDA_LIBRARY, ids=os.path.basename)
def test_library_output_with_launcher_compiles(path, tmp_path):
    with open(path, encoding="utf-8") as fh:
        result = naiveopt.optimize(fh.read(), filename=path, verify=False)
    out = tmp_path / os.path.basename(path)
    out.write_text(result.code, encoding="utf-8")
    done = subprocess.run(["nvcc", "-arch=sm_90", "-c", "-Werror", "all-warnings", "-o",
                           str(tmp_path / "k.o"), str(out)], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr


@nvcc
def test_a_build_defining_a_free_size_compiles(tmp_path):
    """The paper's style builds with the sizes as macros (``-DHEIGHT_A=4096``): the kernel's
    added size parameter and the launcher's are prefixed (``naiveopt_HEIGHT_A``), so the
    definition cannot turn a declaration into ``int 4096``; a caller passes the macro."""
    path = os.path.join(ROOT, "kernels", "naive", "mm_macro.cu")
    with open(path, encoding="utf-8") as fh:
        result = naiveopt.optimize(fh.read(), filename=path, verify=False)
    assert "int naiveopt_HEIGHT_A" in result.code and "int HEIGHT_A" not in result.code
    out = tmp_path / "mm_macro_opt.cu"
    out.write_text(result.code + "\nvoid call(float *A, float *B, float *C)\n{\n"
                   "    mm_macro_launch(A, B, C, HEIGHT_A);\n}\n", encoding="utf-8")
    done = subprocess.run(["nvcc", "-arch=sm_90", "-c", "-DHEIGHT_A=4096", "-o",
                           str(tmp_path / "k.o"), str(out)], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr


@nvcc
def test_whole_program_calls_the_launcher_and_links(tmp_path):
    """A program's main() calls mm_launch on a stream: the output (kernel, launcher, host code
    passed through) compiles and links with nvcc as the input did."""
    result = naiveopt.optimize(PROGRAM, filename="app.cu", verify=False)
    assert result.code.index("mm_launch(const float") < result.code.index("int main()")
    app = tmp_path / "app_opt.cu"
    app.write_text(result.code, encoding="utf-8")
    done = subprocess.run(["nvcc", "-arch=sm_90", "-o", str(tmp_path / "app"), str(app)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr


# ----------------------------------------------------------------- OpenCL work-size header
import re  # noqa: E402
import shutil  # noqa: E402

OPENCL_LIBRARY = [f for f in KERNEL_FILES if f.endswith(".cl")]
CC = shutil.which("cc") or shutil.which("gcc")


@pytest.mark.skipif(CC is None, reason="no C compiler (cc) on PATH")
@pytest.mark.parametrize("path", OPENCL_LIBRARY, ids=os.path.basename)
def test_opencl_work_size_header_gives_launch_configs_numbers(path, tmp_path):
    """The header beside each OpenCL output compiles as C99 with warnings as errors, and its
    NAME_work_sizes fill the NDRange launch_config gives (the one verification ran) at sizes
    that are not tile multiples."""
    with open(path, encoding="utf-8") as fh:
        name = os.path.basename(path).replace(".cl", "_opt.cl")
        result = naiveopt.optimize(fh.read(), filename=path, verify=False,
                                   sidecar_name=name + ".json")
    header = result.work_sizes_header
    assert f"// Work sizes for C and C++ hosts: {name}.h" in result.code
    (tmp_path / f"{name}.h").write_text(header, encoding="utf-8")
    macros = {m: int(v) for m, v in re.findall(r"#define (\w+) (\d+)\n", header)}
    calls, expected = [], []
    for k in result.kernels:
        sig = re.search(rf"int {k.name}_work_sizes\(([^)]*)\)", header).group(1)
        # (a size nothing else gives is a parameter naiveopt_NAME: ir.gprocedure.size_param_name)
        sizes = {n.removeprefix("naiveopt_"): 37 + 26 * i
                 for i, n in enumerate(re.findall(r"long (\w+)", sig))}
        args = ", ".join([str(v) for v in sizes.values()] + ["g", "l"])
        calls.append(f'    if ({k.name}_work_sizes({args}) != 0) return 1;\n'
                     '    printf("%zu %zu %zu %zu %zu %zu\\n", g[0], g[1], g[2], l[0], l[1], l[2]);')
        cfg = naiveopt.launch_config(result, k.name, **sizes, **macros)
        expected.append(" ".join(map(str, cfg.global_size + cfg.block)))
    main = tmp_path / "main.c"
    main.write_text(f'#include <stdio.h>\n#include "{name}.h"\nint main(void)\n{{\n'
                    "    size_t g[3], l[3];\n" + "\n".join(calls) + "\n    return 0;\n}\n")
    exe = tmp_path / "main"
    done = subprocess.run([CC, "-std=c99", "-Wall", "-Wextra", "-Werror", "-o", str(exe),
                           str(main)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0 and run.stdout.split("\n")[:-1] == expected


def test_opencl_work_size_header_refuses_what_an_unguarded_output_cannot_run():
    from naiveopt.api import compile_module
    from naiveopt.frontend import parse_unit
    from naiveopt.launch import LaunchGeometry
    from naiveopt.launcher import opencl_header

    path = os.path.join(ROOT, "kernels", "naive", "mm_macro.cl")
    with open(path, encoding="utf-8") as fh:
        c = compile_module(parse_unit(path, fh.read(), {}), None, "sm_90", False)
    (proc,) = c.module.procedures
    geo = LaunchGeometry((32, 16), (2, 1), ("WIDTH_B", "HEIGHT_A"), (64, 16))
    text = opencl_header([proc], {proc.name: geo}, c.module.macros, "mm_macro.cl")
    assert "static inline int mm_macro_work_sizes(long naiveopt_HEIGHT_A, size_t " \
        "global_size[3]" in text
    assert "if ((WIDTH_B) % 64 != 0 || (naiveopt_HEIGHT_A) % 16 != 0)" in text
    assert "return -63;" in text and "#define WIDTH_B " in text
