"""File-scope data (issue 11, item 2): ``__constant__`` arrays and scalars, initialized tables,
``__device__`` read-only globals, OpenCL program-scope ``__constant`` data.

They are kept in CUDA output, become program-scope ``__constant`` data (initialized) or extra
kernel arguments (host-filled) in OpenCL, are filled with random data by verification, named by
the launch contract, and left alone by the optimization passes (the stencil pass stages the
convolution's input around them). Writes to them are rejected with a location.
"""
from __future__ import annotations

import json

import numpy as np
import pytest

import naiveopt
from naiveopt.errors import NaiveoptError
from naiveopt.frontend import parse_module
from naiveopt.verify import opencl
from conftest import compile_cuda, nvcc, run_cli

# the kernel (Kirk & Hwu's 1-D convolution), at an odd size
CONV_1D = """#define MASK_WIDTH 5
#pragma naiveopt sizes(Width=3001) array(N, Width) array(P, Width)

__constant__ float M[MASK_WIDTH];

__global__ void convolution_1D(float *N, float *P, int Width) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < Width) {
        float Pvalue = 0;
        int N_start_point = i - (MASK_WIDTH / 2);
        for (int j = 0; j < MASK_WIDTH; j++) {
            if (N_start_point + j >= 0 && N_start_point + j < Width) {
                Pvalue += N[N_start_point + j] * M[j];
            }
        }
        P[i] = Pvalue;
    }
}
"""

TABLE = """#pragma naiveopt sizes(N=1003) array(A, N) array(B, N)
__constant__ float coeff[3] = {0.25f, 0.5f, 0.25f};
__device__ const float scale = 2.0f;
__global__ void smooth(const float *A, float *B, int N) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i > 0 && i < N - 1) {
        float s = 0.0f;
        for (int k = 0; k < 3; k++) s += coeff[k] * A[i + k - 1];
        B[i] = s * scale;
    }
}
"""

HELPER = """#define K 4
#pragma naiveopt sizes(N=1001) array(A, N) array(B, N)
__constant__ float W[K];
__constant__ float bias;
__device__ float weigh(float v, int k) { return v * W[k] + bias; }
__device__ float twice(float v, int k) { return 2.0f * weigh(v, k); }
__global__ void apply(const float *A, float *B, int N) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) {
        float s = 0.0f;
        for (int k = 0; k < K; k++) s += twice(A[i], k);
        B[i] = s;
    }
}
"""

PROGRAM_SCOPE_CL = """#pragma naiveopt sizes(N=1001) array(A, N) array(B, N)
__constant float M[5] = {0.1f, 0.2f, 0.4f, 0.2f, 0.1f};
__kernel void conv(__global const float *A, __global float *B, int N) {
    int i = get_global_id(0);
    if (i < N) {
        float s = 0.0f;
        for (int j = 0; j < 5; j++) {
            int p = i + j - 2;
            if (p >= 0 && p < N) s += M[j] * A[p];
        }
        B[i] = s;
    }
}
"""

FILTER_2D = """#pragma naiveopt sizes(H=67, W=71) array(A, H, W) array(B, H, W)
__constant__ float F[3][3];
__global__ void blur(const float *A, float *B, int H, int W) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= 1 && x < W - 1 && y >= 1 && y < H - 1) {
        float s = 0.0f;
        for (int dy = 0; dy < 3; dy++)
            for (int dx = 0; dx < 3; dx++)
                s += F[dy][dx] * A[(y + dy - 1) * W + x + dx - 1];
        B[y * W + x] = s;
    }
}
"""


def optimize(source: str, filename: str, target: str, **kw):
    result = naiveopt.optimize(source, filename=filename, target=target, **kw)
    for k in result.kernels:
        assert k.verification.status == "passed", k.verification.detail
    return result


def test_module_keeps_file_scope_data_in_source_order():
    module = parse_module("k.cu", TABLE.replace("__device__ const", "__constant__ const")
                          + CONV_1D.replace("#define MASK_WIDTH 5", "#define MASK_WIDTH 5\n"
                                            "__device__ float late;"), {})
    assert [(g.name, g.space, g.dims, g.initialized) for g in module.globals] == [
        ("coeff", "constant", ["3"], True), ("scale", "constant", [], True),
        ("late", "device", [], False), ("M", "constant", ["MASK_WIDTH"], False)]
    assert module.procedures[1].global_args == ["M"]
    assert module.procedures[0].global_args == []


@pytest.mark.parametrize("target", ["cuda", "opencl"])
def test_conv_1d_with_constant_mask_is_staged_and_verified(target):
    result = optimize(CONV_1D, "conv1d.cu", target, options={"cost_model": "unlimited"})
    assert "stencil" in result.kernels[0].passes
    assert "Width=3001" in result.kernels[0].verification.detail
    launch = result.launch_json()
    kernel = launch["kernels"]["convolution_1D"]
    assert kernel["constant_data"][0]["name"] == "M"
    if target == "cuda":
        assert "__constant__ float M[MASK_WIDTH];" in result.code
        assert "cudaMemcpyToSymbol(M, host_M, MASK_WIDTH * sizeof(float))" in result.code
        assert [s["name"] for s in launch["constant_symbols"]] == ["M"]
        assert "extra_args" not in kernel
    else:
        assert "int Width, __constant float *M)" in result.code
        assert "argument 3: __constant float *M" in result.code
        assert kernel["extra_args"] == [{
            "name": "M", "argument": 3, "declaration": "__constant float *M",
            "element": "float", "elements": "MASK_WIDTH",
            "from": "file-scope __constant__ float M[MASK_WIDTH] of the CUDA input "
                    "(cudaMemcpyToSymbol data): pass a buffer of its elements"}]
        assert "constant_symbols" not in launch


def test_verification_fills_the_mask_and_sees_a_wrong_mask():
    """The naive program really takes the mask as its last argument: with a mask of ones the
    convolution is a 5-point box sum, which differs from a mask of zeros."""
    result = naiveopt.optimize(CONV_1D, filename="conv1d.cu", target="opencl", verify=False)
    n = 37
    data = np.arange(n, dtype=np.float32)
    outs = []
    for mask in (np.ones(5, np.float32), np.zeros(5, np.float32)):
        outs.append(opencl.run(result.code, "convolution_1D", [], [
            data, np.zeros(n, np.float32), np.int32(n), mask], (1024, 1), (256, 1))[1])
    assert outs[0][2] == pytest.approx(0 + 1 + 2 + 3 + 4)
    assert not outs[1].any()


@nvcc
@pytest.mark.parametrize("source", [CONV_1D, TABLE, HELPER, FILTER_2D])
def test_cuda_output_compiles(source, tmp_path):
    result = naiveopt.optimize(source, filename="k.cu", target="cuda", verify=False)
    path = tmp_path / "out.cu"
    path.write_text(result.code)
    done = compile_cuda(str(path), tmp_path)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("target", ["cuda", "opencl"])
def test_initialized_table_and_device_const_stay_at_file_scope(target):
    result = optimize(TABLE, "table.cu", target)
    if target == "cuda":
        assert "__constant__ float coeff[3] = {0.25f, 0.5f, 0.25f};" in result.code
        assert "__device__ const float scale = 2.0f;" in result.code
    else:
        assert "__constant float coeff[3] = {0.25f, 0.5f, 0.25f};" in result.code
        assert "__constant const float scale = 2.0f;" in result.code
        assert "int N) {" in result.code          # no extra arguments
    kernel = result.launch_json()["kernels"]["smooth"]
    assert [d["initialized"] for d in kernel["constant_data"]] == [True, True]
    assert "constant_symbols" not in result.launch_json()


@pytest.mark.parametrize("target", ["cuda", "opencl"])
def test_constant_data_read_through_helpers_is_passed_on(target):
    result = optimize(HELPER, "helper.cu", target)
    if target == "opencl":
        assert "float weigh(float v, int k, __constant float *W, float bias)" in result.code
        assert "weigh(v, k, W, bias)" in result.code
        assert "int N, __constant float *W,\n" in result.code or \
            "int N, __constant float *W, float bias)" in result.code
        extra = result.launch_json()["kernels"]["apply"]["extra_args"]
        assert [(e["name"], e["argument"]) for e in extra] == [("W", 3), ("bias", 4)]
    else:
        assert "__constant__ float W[K];\n__constant__ float bias;" in result.code


@pytest.mark.parametrize("target", ["cuda", "opencl"])
def test_opencl_program_scope_constant_input(target):
    result = optimize(PROGRAM_SCOPE_CL, "conv.cl", target,
                      options={"cost_model": "unlimited"})
    assert "stencil" in result.kernels[0].passes
    space = "__constant__" if target == "cuda" else "__constant"
    assert f"{space} float M[5] = {{0.1f, 0.2f, 0.4f, 0.2f, 0.1f}};" in result.code


@pytest.mark.parametrize("target", ["cuda", "opencl"])
def test_two_dimensional_constant_filter(target):
    # staged wherever legal: whether staging a 3x3 filter pays is test_stencil.py's question
    result = optimize(FILTER_2D, "blur.cu", target, options={"cost_model": "unlimited"})
    assert "stencil" in result.kernels[0].passes
    assert "F[dy" in result.code                       # the filter is read as written
    if target == "opencl":
        assert "__constant float (*F)[3]" in result.code


def test_passes_leave_constant_reads_alone_with_a_remark():
    result = naiveopt.optimize(CONV_1D, filename="conv1d.cu", verify=False,
                               options={"memory": "texture"})
    assert "tex1Dfetch<float>(M" not in result.code and "M[j" in result.code
    assert any("M: file-scope read-only data" in r.message for r in result.remarks)


@pytest.mark.parametrize("source,message,where", [
    ("__device__ float counter;\n__global__ void k(float *A, int N) {\n"
     "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
     "    if (i < N) { A[i] = counter; counter = A[i]; }\n}\n",
     "'k' writes the file-scope __device__ variable 'counter': mutable global state", "4:34"),
    ("__device__ float hist[4];\n__device__ void bump(int b) { hist[b] += 1.0f; }\n"
     "__global__ void k(float *A) { bump(0); }\n",
     "'bump' writes the file-scope __device__ variable 'hist'", "2:31"),
    ("float host_table[4];\n__global__ void k(float *A) { A[0] = host_table[1]; }\n",
     "host variable 'host_table' is read in device code", "2:38"),
    ("__constant__ float M[4];\n__device__ float first(const float *m) { return m[0]; }\n"
     "__global__ void k(float *A) { A[0] = first(M); }\n",
     "the file-scope array 'M' is used other than by subscripts", "3:44"),
    ("__constant__ float M[4];\n__global__ void k(float *A) { float M = 1.0f; A[0] = M; }\n",
     "shadows the file-scope variable 'M'", "2:37"),
])
def test_unsupported_file_scope_data_is_a_located_error(source, message, where):
    with pytest.raises(NaiveoptError) as info:
        naiveopt.optimize(source, filename="k.cu", verify=False)
    text = str(info.value)
    assert message in text and f"k.cu:{where}:" in text, text


def test_cli_sidecar_names_the_symbols(tmp_path):
    src = tmp_path / "conv1d.cu"
    src.write_text(CONV_1D)
    done = run_cli(src, "-o", tmp_path / "out.cu")
    assert done.returncode == 0, done.stderr
    sidecar = json.loads((tmp_path / "out.cu.json").read_text())
    assert sidecar["constant_symbols"][0]["host_fill"].startswith("cudaMemcpyToSymbol(M,")


DEVICE_READ_ONLY = """#pragma naiveopt sizes(N=517) array(A, N) array(B, N)
__device__ float lut[8];
__global__ void lookup(const float *A, float *B, int N) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) B[i] = A[i] * lut[i % 8];
}
"""


def test_read_only_device_array_is_a_global_const_argument_in_opencl():
    result = optimize(DEVICE_READ_ONLY, "lut.cu", "opencl")
    assert "int N, __global const float *lut)" in result.code
    cuda = naiveopt.optimize(DEVICE_READ_ONLY, filename="lut.cu", verify=False)
    assert "__device__ float lut[8];" in cuda.code
    assert cuda.launch_json()["constant_symbols"][0]["space"] == "__device__"


def test_division_of_uniform_operands_is_a_uniform_index_term():
    """``i - MASK_WIDTH / 2`` decomposes (the quotient is thread-invariant) and folds with C's
    truncating division once its operands are numbers."""
    import sympy

    from naiveopt.ir.symbolic import CDiv

    assert CDiv(sympy.Integer(-5), sympy.Integer(2)) == -2
    assert CDiv(sympy.Integer(5), sympy.Integer(2)) == 2
    result = naiveopt.optimize(CONV_1D, filename="conv1d.cu", verify=False)
    text = [r.message for r in result.remarks if r.pass_name == "memory-expressions"]
    assert any(m.startswith("N[idx + j - CDiv(MASK_WIDTH, 2)]") and "unresolved" not in m
               for m in text), text


# sizes the host sets in constant memory (cudaMemcpyToSymbol), as CUDA samples keep a
# problem's dimensions: read as sizes like parameters
HOST_SIZES = """__constant__ int c_rows;
__constant__ int c_cols;
__constant__ float c_scale;

__global__ void scale_rows(const float *in, float *out)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < c_rows && col < c_cols)
        out[row * c_cols + col] = c_scale * in[row * c_cols + col];
}
"""


@pytest.mark.parametrize("target", ["cuda", "opencl"])
def test_integers_the_host_sets_are_verified_as_sizes(target):
    """Without annotations the file verifies at inferred sizes of c_rows and c_cols (was
    "unknown name 'c_rows' in the launch geometry"); c_scale is a value like a scalar's."""
    result = naiveopt.optimize(HOST_SIZES, filename="k.cu", target=target)
    (k,) = result.kernels
    assert k.verification.status == "passed", k.verification.detail
    sets = k.verification.facts["sizes"]["sets"]
    assert set(sets["inferred"]) == {"c_rows", "c_cols"}
    assert sets["inferred"] != sets["inferred-odd"]


def test_a_pragma_sizes_an_integer_the_host_sets():
    source = "#pragma naiveopt sizes(c_rows=37, c_cols=129)\n" + HOST_SIZES
    (k,) = naiveopt.optimize(source, filename="k.cu").kernels
    assert k.verification.status == "passed", k.verification.detail
    assert "c_rows=37" in k.verification.detail


@nvcc
def test_the_launcher_takes_the_sizes_the_host_sets(tmp_path):
    """The host knows c_rows and c_cols (it set them): the launcher takes them to size the
    grid, and the output compiles."""
    code = naiveopt.optimize(HOST_SIZES, filename="k.cu").code
    assert "int naiveopt_c_rows" in code[code.index("scale_rows_launch("):]
    path = tmp_path / "k.cu"
    path.write_text(code)
    done = compile_cuda(str(path), str(tmp_path))
    assert done.returncode == 0, done.stderr


# a struct of parameters in constant memory, as the CUDA samples' particles keep theirs
# (``__constant__ SimParams params;`` filled with cudaMemcpyToSymbol)
STRUCT_PARAMS = """typedef struct {
    float gravity;
    float damping;
    int numBodies;
} SimParams;

__constant__ SimParams params;

__global__ void integrate(float4 *vel, const float4 *force, float dt)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < params.numBodies) {
        vel[i].y += (params.gravity + force[i].y) * dt;
        vel[i].x = vel[i].x * params.damping + force[i].x * dt;
    }
}

void step(float4 *vel, const float4 *force, float dt, const SimParams *h, int n)
{
    cudaMemcpyToSymbol(params, h, sizeof(SimParams));
    integrate<<<(n + 255) / 256, 256>>>(vel, force, dt);
}
"""


@pytest.mark.parametrize("target", ["cuda", "opencl"])
def test_a_struct_the_host_fills_is_read_member_by_member(target):
    """Was "struct type 'SimParams' is not supported here"; numBodies is a size (inferred),
    the others values; a CUDA output declares the struct the host fills, an OpenCL one takes
    each member as an argument."""
    result = naiveopt.optimize(STRUCT_PARAMS, filename="p.cu", target=target)
    (k,) = result.kernels
    assert k.verification.status == "passed", k.verification.detail
    assert "params_numBodies=" in k.verification.detail
    if target == "cuda":
        assert "__constant__ SimParams params;" in result.code
        assert "if (i < params.numBodies)" in result.code
        assert [s["name"] for s in result.constant_symbols] == ["params"]
        assert result.code.count("typedef struct") == 1      # not again in the host code
    else:
        assert [a["name"] for a in k.data["extra_args"]] == [
            "params_gravity", "params_damping", "params_numBodies"]


@nvcc
def test_the_cuda_output_with_a_struct_in_constant_memory_compiles(tmp_path):
    path = tmp_path / "p.cu"
    path.write_text(naiveopt.optimize(STRUCT_PARAMS, filename="p.cu").code)
    done = compile_cuda(str(path), str(tmp_path))
    assert done.returncode == 0, done.stderr[-2000:]


def test_a_struct_in_constant_memory_read_whole_is_a_located_error():
    source = STRUCT_PARAMS.replace("    if (i < params.numBodies) {",
                                   "    SimParams p = params;\n    if (i < p.numBodies) {")
    with pytest.raises(NaiveoptError) as info:
        naiveopt.optimize(source, filename="p.cu", verify=False, arch="none")
    assert "struct type 'SimParams' is not supported here" in info.value.message
    assert info.value.line == 12
