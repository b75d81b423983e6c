"""Struct parameters passed by value (ir/structs.py, passes/functional/struct_params.py).

``typedef struct { int n; float scale; } Params;`` and ``const MatDims d`` are how much real
code passes sizes and coefficients. The members are sizes to the analyses (``i < p.n`` is the
thread space, ``c < d.cols`` a loop bound the tiling passes stage), the output keeps the
kernel's signature and the struct's definition, and verification passes one struct. The
OpenCL outputs are also run here on a struct laid out by NumPy's own C-layout rules and
compared with NumPy, so that a packing that agreed with itself (naive and output alike)
could not pass unnoticed."""
import shutil

import numpy as np
import pytest

import naiveopt
from naiveopt.errors import NaiveoptError
from conftest import compile_cuda, run_cli

AFFINE = """
typedef struct {
    char flag;
    double a;
    size_t n;
    float b;
} Params;

__global__ void affine(Params p, const float *in, float *out)
{
    size_t i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < p.n)
        out[i] = (float)p.a * in[i] + p.b + p.flag;
}
"""

MV = """
struct MatDims { int rows; int cols; };

__global__ void mv(const float *A, const float *x, float *y, const MatDims d)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < d.rows) {
        float s = 0.0f;
        for (int c = 0; c < d.cols; c++)
            s += A[r * d.cols + c] * x[c];
        y[r] = s;
    }
}
"""

BLUR = """
typedef struct { int width; int height; float k; } Config;

__kernel void scale2d(__global const float *src, __global float *dst, const Config cfg)
{
    int x = get_global_id(0);
    int y = get_global_id(1);
    if (x >= cfg.width || y >= cfg.height) return;
    dst[y * cfg.width + x] = cfg.k * src[y * cfg.width + x];
}
"""

HOST = """
#include <cstdio>
#include <cuda_runtime.h>
""" + MV + """
int main()
{
    MatDims dims;
    dims.rows = 1000; dims.cols = 700;
    float *A, *x, *y;
    cudaMalloc(&A, dims.rows * dims.cols * sizeof(float));
    cudaMalloc(&x, dims.cols * sizeof(float));
    cudaMalloc(&y, dims.rows * sizeof(float));
    mv<<<(dims.rows + 127) / 128, 128>>>(A, x, y, dims);
    cudaDeviceSynchronize();
    printf("%f\\n", 1.0);
    return 0;
}
"""


def _opencl_run(code, kernel, args, global_size, local_size):
    import pyopencl as cl

    ctx = cl.Context(cl.get_platforms()[0].get_devices())
    queue = cl.CommandQueue(ctx)
    program = cl.Program(ctx, code).build()
    mf = cl.mem_flags
    bound = [cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=a)
             if isinstance(a, np.ndarray) and a.ndim else a for a in args]
    getattr(program, kernel)(queue, global_size, local_size, *bound)
    for a, b in zip(args, bound):
        if isinstance(b, cl.Buffer):
            cl.enqueue_copy(queue, a, b)
    queue.finish()


def test_a_struct_is_read_by_its_members_and_written_back():
    result = naiveopt.optimize(AFFINE, filename="affine.cu")
    code = result.code
    assert result.verified, result.unverified
    assert "typedef struct {" in code and "} Params;" in code
    assert "size_t n;" in code and "char flag;" in code
    assert "__global__ void affine(Params p, const float *in, float *out)" in code
    assert "if (i < p.n)" in code and "p_n" not in code
    # the launch the user reads, and a launcher that takes the struct
    assert "thread space: (p.n, 1)" in code
    assert "affine_launch(Params p, const float *in, float *out," in code
    remarks = [r.message for r in result.remarks if r.pass_name == "struct-params"]
    assert remarks == ["p: a Params passed by value, its 4 members read as scalars"]


def test_member_sizes_drive_the_passes_and_verification():
    result = naiveopt.optimize(MV, filename="mv.cu")
    kernel = result.kernels[0]
    assert result.verified, result.unverified
    assert "coalesce" in kernel.passes                  # d.cols bounds the staged loop
    assert "const struct MatDims d" in result.code and "d.cols" in result.code
    assert "struct MatDims {" in result.code
    facts = " ".join(str(r.message) for r in result.remarks)
    assert "d_rows" in facts and "d_cols" in facts      # inferred like scalar sizes


def test_a_pragma_names_a_member_as_the_kernel_reads_it():
    source = "#pragma naiveopt sizes(d.rows=333, d.cols=129)\n" + MV
    result = naiveopt.optimize(source, filename="mv.cu")
    assert result.verified, result.unverified
    assert "333" in result.kernels[0].verification.detail


def test_opencl_output_runs_on_a_struct_numpy_lays_out():
    result = naiveopt.optimize(AFFINE, filename="affine.cu", target="opencl")
    code = result.code
    assert result.verified, result.unverified
    # OpenCL forbids size_t in a kernel argument: the member is its 64-bit type there
    assert "unsigned long n;" in code and "Params p" in code
    assert "cl_khr_fp64" in code                         # the member's double
    dtype = np.dtype([("flag", np.int8), ("a", np.float64), ("n", np.uint64),
                      ("b", np.float32)], align=True)
    p = np.zeros((), dtype=dtype)
    n = 1000
    p["flag"], p["a"], p["n"], p["b"] = 3, 1.5, n, 0.25
    src = np.random.default_rng(1).uniform(-1, 1, n + 24).astype(np.float32)
    out = np.zeros(n + 24, dtype=np.float32)
    geo = result.kernels[0].geometry
    (gx, gy, gz), local = geo.sizes({"p_n": n})
    _opencl_run(code, "affine", [p, src, out], (gx, gy, gz), local)
    expected = np.float32(1.5) * src[:n] + np.float32(0.25) + 3
    np.testing.assert_allclose(out[:n], expected, rtol=1e-6)
    assert not out[n:].any()                             # the guard held at p.n


def test_opencl_input_struct_in_both_targets():
    for target in ("opencl", "cuda"):
        result = naiveopt.optimize(BLUR, filename="blur.cl", target=target)
        assert result.verified, (target, result.unverified)
        assert "typedef struct {" in result.code and "} Config;" in result.code
        assert "const Config cfg" in result.code and "cfg.width" in result.code
        assert "thread space: (cfg.width, cfg.height" in result.code
    dtype = np.dtype([("width", np.int32), ("height", np.int32), ("k", np.float32)],
                     align=True)
    cfg = np.zeros((), dtype=dtype)
    cfg["width"], cfg["height"], cfg["k"] = 37, 21, 2.5
    result = naiveopt.optimize(BLUR, filename="blur.cl")
    src = np.random.default_rng(2).uniform(-1, 1, 37 * 21).astype(np.float32)
    dst = np.zeros_like(src)
    (gx, gy, gz), local = result.kernels[0].geometry.sizes({"cfg_width": 37,
                                                            "cfg_height": 21})
    _opencl_run(result.code, "scale2d", [src, dst, cfg], (gx, gy, gz), local)
    np.testing.assert_allclose(dst, 2.5 * src, rtol=1e-6)


def test_work_sizes_header_takes_the_members(tmp_path):
    src = tmp_path / "blur.cl"
    src.write_text(BLUR)
    out = tmp_path / "out.cl"
    done = run_cli(src, "-o", out)
    assert done.returncode == 0, done.stderr
    header = (tmp_path / "out.cl.h").read_text()
    assert "scale2d_work_sizes(long cfg_width, long cfg_height, size_t global_size[3]" in header
    assert "cfg_width is cfg.width" in header


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not installed")
def test_cuda_outputs_compile_and_host_launches_pass_the_struct(tmp_path):
    result = naiveopt.optimize(HOST, filename="prog.cu")
    code = result.code
    assert result.verified, result.unverified
    assert code.count("struct MatDims {") == 1          # not also in the host code
    assert code.index("struct MatDims {") < code.index("__global__")
    assert "mv_launch_from((dims.rows + 127) / 128, 128, A, x, y, dims);" in code
    assert "gridDim.x != (unsigned)((d.rows + " in code  # the contract reads the member
    for name, text in (("prog_out.cu", code),
                       ("affine_out.cu", naiveopt.optimize(AFFINE, filename="a.cu").code),
                       ("blur_out.cu", naiveopt.optimize(BLUR, filename="b.cl",
                                                         target="cuda").code)):
        path = tmp_path / name
        path.write_text(text)
        done = compile_cuda(str(path), str(tmp_path))
        assert done.returncode == 0, (name, done.stderr[-2000:])


@pytest.mark.parametrize("source, where, message", [
    ("struct P { float *data; int n; };\n"
     "__global__ void k(P p, float *o) { int i = threadIdx.x; if (i < p.n) o[i] = p.data[i]; }",
     (1, 19), "member 'data' is a pointer"),
    ("struct P { int n; float s[4]; };\n"
     "__global__ void k(P p, float *o) { int i = threadIdx.x; if (i < p.n) o[i] = p.s[0]; }",
     (1, 25), "member 's' is an array"),
    ("union U { int n; float s; };\n"
     "__global__ void k(U u, float *o) { int i = threadIdx.x; if (i < u.n) o[i] = 1.0f; }",
     (2, 21), "unions"),
    ("struct P { int n; float s; __device__ float t() const { return s; } };\n"
     "__global__ void k(P p, float *o) { int i = threadIdx.x; if (i < p.n) o[i] = p.s; }",
     (1, 45), "more than data members ('t')"),
    ("struct P { int n; float s; };\n"
     "__global__ void k(P p, float *o) { int i = threadIdx.x; P q = p; if (i < q.n) o[i] = q.s; }",
     (2, 59), "struct type 'P' is not supported here"),
    # the output's definition and verification's argument would drop the attribute
    ("struct __attribute__((aligned(16))) P { float x; float y; float z; };\n"
     "__global__ void k(P p, float *o) { int i = threadIdx.x; o[i] = p.x + p.z; }",
     (1, 37), "is not laid out as its members are (16 bytes, an alignment or packing"),
    ("struct __attribute__((packed)) P { char c; float x; };\n"
     "__global__ void k(P p, float *o) { int i = threadIdx.x; o[i] = p.x + p.c; }",
     (1, 32), "is not laid out as its members are (5 bytes"),
    ("struct P { int n; float s; };\n"
     "__global__ void k(P p, float *o) { int p_n = 2; int i = threadIdx.x;\n"
     "  if (i < p.n) o[i] = p.s * p_n; }",
     None, "its member's name 'p_n', which naiveopt reads it as, is taken"),
])
def test_struct_forms_not_read_are_located_errors(source, where, message):
    with pytest.raises(NaiveoptError) as err:
        naiveopt.optimize(source, filename="k.cu", verify=False)
    assert message in err.value.message
    if where:
        assert (err.value.line, err.value.col) == where


def test_runners_pack_members_as_c_lays_out_a_struct():
    from naiveopt.verify.opencl import packed

    value = packed([np.int8(3), np.float64(1.5), np.uint64(7), np.float32(0.25)])
    assert value.dtype.itemsize == 32                    # padded to the double's alignment
    assert [value.dtype.fields[f"m{i}"][1] for i in range(4)] == [0, 8, 16, 24]
    assert value.tobytes()[:1] == b"\x03" and value["m2"] == 7
    assert packed([np.int32(5), np.float32(2.0)]).dtype.itemsize == 8


def test_members_the_output_dialect_reserves_are_renamed(tmp_path):
    cuda = """
struct Opts { int read_only; float half; };
__global__ void k(const Opts o, const float *a, float *b)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < o.read_only) b[i] = o.half * a[i];
}
"""
    result = naiveopt.optimize(cuda, filename="k.cu", target="opencl")
    assert result.verified, result.unverified
    assert "struct Opts { int read_only_; float half_; };" in " ".join(result.code.split())
    assert "if (i < o.read_only_)" in result.code
    assert "thread space: (o.read_only, 1)" in result.code   # the host's name
    opencl = """
typedef struct { int class; int new; float k; } Opts;
__kernel void k(__global const float *a, __global float *b, Opts o)
{
    int i = get_global_id(0);
    int j = get_global_id(1);
    if (i < o.class && j < o.new) b[j * o.class + i] = o.k * a[j * o.class + i];
}
"""
    result = naiveopt.optimize(opencl, filename="k.cl", target="cuda")
    assert result.verified, result.unverified
    assert "int class_;" in result.code and "o.new_" in result.code
    if shutil.which("nvcc"):
        path = tmp_path / "k.cu"
        path.write_text(result.code)
        done = compile_cuda(str(path), str(tmp_path))
        assert done.returncode == 0, done.stderr[-2000:]


def test_a_loop_bound_no_size_set_gives_is_unverified_not_a_crash():
    # the pragma names sizes the kernel does not have (its sizes are p.N, p.K): the bound of
    # the loop over k reached the integer-set library as an unknown name (an isl syntax
    # error, found by the fuzzer's struct cases)
    source = """
#pragma naiveopt sizes(N=63, K=7) threads(N)
struct Args { int N; int K; };
__global__ void k0(const float *A, float *B, const Args p)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < p.N) {
        float acc = 0.0f;
        for (int k = 0; k < p.K; k++)
            acc += A[i] * k;
        B[i] = acc;
    }
}
"""
    result = naiveopt.optimize(source, filename="k.cu", defines={"N": "63", "K": "7"})
    assert not result.verified
    assert "the bounds of loop k name p_K, which no size set gives" in \
        result.unverified["k0"], result.unverified


def test_cli_sizes_and_profile_name_a_member(tmp_path):
    src = tmp_path / "mv.cu"
    src.write_text(MV)
    done = run_cli(src, "-D", "d.rows=300", "-D", "d.cols=200", "--explain", "-o",
                   tmp_path / "out.cu")
    assert done.returncode == 0, done.stderr
    assert "verification passed: inferred (d_rows=300, d_cols=200)" in done.stderr
    done = run_cli("profile", src, "--compare", "-D", "d.rows=300", "-D", "d.cols=200")
    assert done.returncode == 0, done.stderr
    assert "global_load_sectors" in done.stdout


# ---------------------------------------------------------------- arrays of structs
PARTICLES = """
#include <cstdio>
#include <cuda_runtime.h>

struct Particle { float x; float y; float z; float w; };

__global__ void drift(Particle *p, const Particle *__restrict__ v, float dt, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        p[i].x += v[i].x * dt;
        p[i].y += v[i].y * dt;
        p[i].z = p[i].z + v[i].z * dt;
        p[i].w = v->w;
    }
}

int main()
{
    Particle *p, *v;
    int n = 1000;
    cudaMalloc(&p, n * sizeof(Particle));
    cudaMalloc(&v, n * sizeof(Particle));
    drift<<<(n + 255) / 256, 256>>>(p, v, 0.1f, n);
    cudaDeviceSynchronize();
    printf("ok\\n");
    return 0;
}
"""

COMPLEX = """
typedef struct { float re; float im; } cfloat;
__kernel void cmul(__global const cfloat *a, __global const cfloat *b, __global cfloat *c,
                   int n)
{
    int i = get_global_id(0);
    if (i < n) {
        c[i].re = a[i].re * b[i].re - a[i].im * b[i].im;
        c[i].im = a[i].re * b[i].im + a[i].im * b[i].re;
    }
}
"""


def test_an_array_of_structs_is_read_as_its_members_array(tmp_path):
    result = naiveopt.optimize(PARTICLES, filename="particles.cu")
    code = result.code
    assert result.verified, result.unverified
    assert "__global__ void drift(struct Particle *p, const struct Particle *__restrict__ v," \
        in code
    assert "float *p_flat = (float *)p;" in code
    assert "p_flat[i * 4 + 2] = p_flat[i * 4 + 2] + v_flat[i * 4 + 2] * dt;" in code
    assert "= v_flat[3];" in code                      # v->w
    assert code.count("struct Particle {") == 1         # cut from the host code
    remarks = [r.message for r in result.remarks if r.pass_name == "struct-params"]
    assert "p: struct Particle elements of 4 float, read member by member as p[i * 4 + k]" \
        in remarks
    if shutil.which("nvcc"):
        path = tmp_path / "particles_out.cu"
        path.write_text(code)
        done = compile_cuda(str(path), str(tmp_path))
        assert done.returncode == 0, done.stderr[-2000:]


def test_an_opencl_array_of_structs_runs_on_numpy_records():
    for target in ("opencl", "cuda"):
        result = naiveopt.optimize(COMPLEX, filename="cmul.cl", target=target)
        assert result.verified, (target, result.unverified)
    result = naiveopt.optimize(COMPLEX, filename="cmul.cl")
    assert "__global const float *a_flat = (__global const float *)a;" in result.code
    record = np.dtype([("re", np.float32), ("im", np.float32)])
    n, rng = 1001, np.random.default_rng(3)
    a, b = (np.zeros(n, dtype=record) for _ in range(2))
    for x in (a, b):
        x["re"], x["im"] = rng.uniform(-1, 1, n), rng.uniform(-1, 1, n)
    c = np.zeros(n, dtype=record)
    (gx, gy, gz), local = result.kernels[0].geometry.sizes({"n": n})
    _opencl_run(result.code, "cmul", [a, b, c, np.int32(n)], (gx, gy, gz), local)
    want = (a["re"] + 1j * a["im"]) * (b["re"] + 1j * b["im"])
    np.testing.assert_allclose(c["re"], want.real, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(c["im"], want.imag, rtol=1e-5, atol=1e-6)


def test_a_struct_array_used_whole_is_a_located_error():
    source = ("struct P { float x; float y; };\n\n"
              "__global__ void k(P *p, int n) { int i = threadIdx.x; if (i < n) p[i] = p[0]; }\n")
    with pytest.raises(NaiveoptError) as err:
        naiveopt.optimize(source, filename="k.cu", verify=False)
    assert "struct array parameter 'p' is used other than by its elements' members " \
        "('p[i].x')" in err.value.message
    assert err.value.line == 3


def test_a_struct_array_named_like_a_member_keeps_the_members():
    # an array named x: renaming it to x_flat must leave blockIdx.x and the like alone
    source = COMPLEX.replace("*a,", "*x,").replace("a[i]", "x[i]")
    result = naiveopt.optimize(source, filename="cmul.cl", target="cuda")
    assert result.verified, result.unverified
    assert "blockIdx.x * blockDim.x + threadIdx.x" in result.code
    assert "const float *x_flat = (const float *)x;" in result.code


def test_a_bool_member_is_a_byte_in_opencl():
    # OpenCL C takes no bool inside a kernel's struct argument (PoCL: "cannot be used as the
    # type of a kernel parameter"); C++'s bool is one byte, as uchar is
    source = """
struct Opt { int n; bool relu; float s; };
__global__ void k(const float *a, float *b, Opt o)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < o.n) { float v = o.s * a[i]; b[i] = (o.relu && v < 0.0f) ? 0.0f : v; }
}
"""
    result = naiveopt.optimize(source, filename="k.cu", target="opencl")
    assert result.verified, result.unverified
    assert "uchar relu;" in result.code
    assert "bool relu;" in naiveopt.optimize(source, filename="k.cu").code


HELPERS = """
struct Params { int n; float scale; float bias; };

__device__ float affine(const Params &p, float v) { return p.scale * v + p.bias; }
__device__ int count(Params q) { return q.n; }

__global__ void apply(const float *in, float *out, Params p)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < count(p))
        out[i] = affine(p, in[i]);
}
"""


def test_helpers_take_the_struct_as_its_members(tmp_path):
    for target in ("cuda", "opencl"):
        result = naiveopt.optimize(HELPERS, filename="h.cu", target=target)
        assert result.verified, (target, result.unverified)
        code = result.code
        assert "float affine(int p_n, float p_scale, float p_bias, float v)" in code
        assert "affine(p.n, p.scale, p.bias, in[i])" in code
        assert "if (i < p.n)" in code                  # count(p) inlined: the guard read
    if shutil.which("nvcc"):
        path = tmp_path / "h.cu"
        path.write_text(naiveopt.optimize(HELPERS, filename="h.cu").code)
        done = compile_cuda(str(path), str(tmp_path))
        assert done.returncode == 0, done.stderr[-2000:]


def test_a_helper_taking_a_struct_gets_a_struct_parameter_or_an_error():
    source = HELPERS.replace("__device__ float affine(const Params &p, float v)",
                             "__device__ float twice(const Params &p, float v)\n"
                             "{ return affine(p, v) * 2.0f; }\n"
                             "__device__ float affine(const Params &p, float v)")
    source = source.replace("out[i] = affine(p, in[i]);", "out[i] = affine(p, in[i]) + "
                            "twice(p, 1.0f);")
    result = naiveopt.optimize(source.replace("__device__ float twice", "__device__ float "
                                              "affine(const Params &p, float v);\n"
                                              "__device__ float twice"), filename="h.cu")
    assert result.verified, result.unverified          # a helper passes its own on
    # an element of an array of structs passed whole: not read (its members are)
    element = """
struct Coef { float scale; float bias; };
__device__ float affine(const Coef &c, float v) { return c.scale * v + c.bias; }
__global__ void apply(const float *in, float *out, const Coef *cs, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = affine(cs[i], in[i]);
}
"""
    with pytest.raises(NaiveoptError) as err:
        naiveopt.optimize(element, filename="h.cu", verify=False)
    assert "'affine' takes a 'Coef' here: naiveopt passes a struct parameter of that type " \
        "to it, nothing else" in err.value.message
    assert err.value.line == 7


def test_helpers_come_after_the_helpers_they_call():
    # g calls f through a prototype and f is defined after it: the output writes
    # definitions only, so g came before any declaration of f (OpenCL build failure)
    source = """
__device__ float f(float v);
__device__ float g(float v) { return f(v) * 2.0f; }
__device__ float f(float v) { return v + 1.0f; }
__global__ void k(const float *a, float *b, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) b[i] = g(a[i]);
}
"""
    for target in ("opencl", "cuda"):
        result = naiveopt.optimize(source, filename="k.cu", target=target)
        assert result.verified, result.unverified
        assert result.code.index(" f(float v) {") < result.code.index(" g(float v) {")
