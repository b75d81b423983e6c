"""Verification data (issue 11, items 5-7): buffers of each kernel's own element types,
tolerances by type, checks that prove something (finite outputs, changed outputs), index
arrays in range, and several '#pragma naiveopt sizes' sets.

A check that cannot prove anything is 'skipped' with a reason, never 'passed'; a kernel no
optimization pass changed is never 'failed'.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

import naiveopt
from naiveopt.ir.elements import element, element_bytes
from naiveopt.verify import opencl

GID = "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"

DAXPY_CU = """\
#pragma naiveopt sizes(n=1024) array(x, n) array(y, n)
#pragma naiveopt sizes(n=1001)
__global__ void daxpy(double *y, const double *x, double a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
"""

DMV_CU = """\
#pragma naiveopt sizes(H=64, W=64) array(A, H, W) array(B, W) array(C, H)
#pragma naiveopt sizes(H=67, W=45)
__global__ void dmv(const double *A, const double *B, double *C, int H, int W)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < H) {
        double s = 0.0;
        for (int k = 0; k < W; k++)
            s += A[i * W + k] * B[k];
        C[i] = s;
    }
}
"""

DMV_CL = """\
#pragma naiveopt sizes(H=64, W=64) array(A, H, W) array(B, W) array(C, H)
#pragma naiveopt sizes(H=67, W=45)
__kernel void dmv(__global const double *A, __global const double *B, __global double *C,
                  int H, int W)
{
    int i = get_global_id(0);
    if (i < H) {
        double s = 0.0;
        for (int k = 0; k < W; k++)
            s += A[i * W + k] * B[k];
        C[i] = s;
    }
}
"""


def _verify(source: str, filename: str, target: str | None = None):
    result = naiveopt.optimize(source, filename=filename, target=target)
    (kernel,) = result.kernels
    return kernel.verification


@pytest.mark.parametrize("source,filename", [(DAXPY_CU, "daxpy.cu"), (DMV_CU, "dmv.cu"),
                                             (DMV_CL, "dmv.cl")])
@pytest.mark.parametrize("target", ["cuda", "opencl"])
def test_double_kernels_verify_at_every_pragma_size_set(source, filename, target):
    """Double buffers and scalars (float32 ones were refused by the runtime and blamed on an
    out-of-bounds access); the second sizes line is a second set, not a replacement."""
    v = _verify(source, filename, target)
    assert v.status == "passed", v.detail
    assert len(v.checks) == 2 and v.checks[0].startswith("pragma ") and \
        v.checks[1].startswith("pragma2 "), v.checks


def test_double_output_enables_fp64_in_opencl():
    result = naiveopt.optimize(DMV_CU, filename="dmv.cu", target="opencl")
    assert "#pragma OPENCL EXTENSION cl_khr_fp64 : enable" in result.code
    plain = naiveopt.optimize(DMV_CU.replace("double", "float"), filename="mv.cu",
                              target="opencl", verify=False)
    assert "cl_khr_fp64" not in plain.code


def test_double_tolerance_is_tight():
    from naiveopt.verify.check import first_mismatch

    want = np.array([1.0, 2.0, 3.0])
    assert first_mismatch(want, want * (1 + 1e-12)) is None
    assert first_mismatch(want, want + np.array([0, 1e-7, 0])) == 1
    ints = np.array([1, 2, 3], dtype=np.int32)
    assert first_mismatch(ints, ints.copy()) is None
    assert first_mismatch(ints, ints + np.array([0, 0, 1], dtype=np.int32)) == 2


def test_a_device_without_fp64_gives_a_reason_not_a_crash(monkeypatch):
    monkeypatch.setattr(opencl, "device_has", lambda ext: ext != "cl_khr_fp64")
    v = _verify(DAXPY_CU, "daxpy.cu")
    assert v.status == "skipped"
    assert "the OpenCL device has no fp64" in v.detail


def test_an_unexpected_runtime_error_is_not_blamed_on_the_kernel(monkeypatch):
    """An exception inside the worker (here: an argument the runtime refuses) is 'could not
    run', never a pass and never 'probably an out-of-bounds access'."""
    from naiveopt.verify import check

    real = check.make_arg

    def wrong_width(arg, sizes, rng, value_range=None):
        value = real(arg, sizes, rng, value_range)
        return np.int8(value) if arg.role == "size" else value

    monkeypatch.setattr(check, "make_arg", wrong_width)
    v = _verify(DAXPY_CU, "daxpy.cu")
    assert v.status == "skipped", v.detail
    assert "could not run" in v.detail and "out-of-bounds" not in v.detail


@pytest.mark.parametrize("ctype", ["int", "unsigned int", "unsigned", "char", "unsigned char",
                                   "short", "unsigned short", "long", "unsigned long",
                                   "long long"])
def test_integer_kernels_verify(ctype):
    source = ("#pragma naiveopt sizes(N=300, W=8) array(A, N, W) array(B, N) scalar(s, 3)\n"
              f"__global__ void isum(const {ctype} *A, {ctype} *B, {ctype} s, int N, int W)\n"
              "{\n" + GID + "    if (i < N) {\n"
              f"        {ctype} acc = s;\n"
              "        for (int k = 0; k < W; k++)\n"
              "            acc += A[i * W + k] * (k + 1);\n"
              "        B[i] = acc;\n    }\n}\n")
    for target in ("cuda", "opencl"):
        v = _verify(source, "isum.cu", target)
        assert v.status == "passed", (ctype, target, v.detail)


def test_element_table():
    assert element("double").dtype == "float64"
    assert element("unsigned int").dtype == element("uint").dtype == "uint32"
    assert element("long long int").dtype == "int64"
    assert element("unsigned char").kind == "unsigned"
    assert element("size_t").dtype == "uint64"
    assert element("float4") is None
    assert element_bytes("half") == 2 and element_bytes("float4") == 4


LOG_CU = """\
#pragma naiveopt sizes(N=500) array(S, N) array(K, N) array(P, N)
__global__ void price(const float *S, const float *K, float *P, int N)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) P[i] = logf(S[i] / K[i]) + sqrtf(S[i]) * 0.5f;
}
"""


def test_logs_of_random_signs_are_checked_on_positive_inputs():
    """On [-1, 1] most outputs are NaN (which compares equal to NaN): the check moves to
    positive inputs and says so."""
    v = _verify(LOG_CU, "price.cu")
    assert v.status == "passed", v.detail
    assert "float inputs in [0.5, 1.5]" in v.detail and "NaN/inf" in v.detail


@pytest.mark.parametrize("expression", ["0.0f / 0.0f", "sqrtf(-1.0f - S[i] * S[i])"])
def test_an_output_nan_on_every_range_is_not_verified(expression):
    source = LOG_CU.replace("logf(S[i] / K[i]) + sqrtf(S[i]) * 0.5f", expression)
    v = _verify(source, "nan.cu")
    assert v.status == "skipped", v.detail
    assert "mostly NaN/inf" in v.detail and "prove nothing" in v.detail


def test_a_kernel_that_changes_nothing_is_not_verified():
    source = ("#pragma naiveopt sizes(N=300) array(A, N)\n"
              "__global__ void same(float *A, int N)\n{\n" + GID +
              "    if (i < N) A[i] = A[i];\n}\n")
    v = _verify(source, "same.cu")
    assert v.status == "skipped", v.detail
    assert "changes no element" in v.detail


def test_a_set_that_proves_nothing_counts_only_beside_one_that_does():
    """M = 0 writes nothing: compared (a difference would fail) but no pass alone."""
    source = ("#pragma naiveopt sizes(N=300, M=0) array(A, N)\n"
              "#pragma naiveopt sizes(M=3)\n"
              "__global__ void upto(float *A, int N, int M)\n{\n" + GID +
              "    if (i < N && i % 7 < M) A[i] = 2.0f * A[i] + 1.0f;\n}\n")
    v = _verify(source, "upto.cu")
    assert v.status == "passed", v.detail
    assert "proves nothing alone" in v.checks[0] and "proves nothing" not in v.checks[1]
    alone = _verify(source.replace("#pragma naiveopt sizes(M=3)\n", ""), "upto.cu")
    assert alone.status == "skipped" and "changes no element" in alone.detail


GATHER_CU = """\
#pragma naiveopt sizes(N=300, M=77) array(idx, N) array(A, M) array(out, N)
__global__ void gather(const int *idx, const float *A, float *out, int N)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) {
        int k = idx[i];
        out[i] = A[k] * 2.0f + A[idx[(i + 1) % N]];
    }
}
"""

CSR_CU = """\
#pragma naiveopt sizes(n=100, nnz=517, m=90)
#pragma naiveopt array(rowptr, n + 1) array(col, nnz) array(val, nnz) array(x, m) array(y, n)
__global__ void spmv(const int *rowptr, const int *col, const float *val, const float *x,
                     float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float s = 0.0f;
        for (int j = rowptr[i]; j < rowptr[i + 1]; j++)
            s += val[j] * x[col[j]];
        y[i] = s;
    }
}
"""


@pytest.mark.parametrize("source,filename,arrays", [(GATHER_CU, "gather.cu", "idx"),
                                                    (CSR_CU, "spmv.cu", "rowptr, col")])
@pytest.mark.parametrize("target", ["cuda", "opencl"])
def test_index_arrays_are_filled_in_range(source, filename, arrays, target):
    v = _verify(source, filename, target)
    assert v.status == "passed", v.detail
    assert f"index arrays {arrays} filled in range" in v.detail


def _without_pragmas(source: str) -> str:
    return "".join(line for line in source.splitlines(keepends=True)
                   if not line.startswith("#pragma naiveopt"))


ELL_EMBED_CU = """\
__global__ void ell(int rows, int width, const int *cols, const float *vals, const float *x,
                    float *y)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        float s = 0.0f;
        for (int n = 0; n < width; n++)
            s += vals[rows * n + r] * x[cols[rows * n + r]];
        y[r] = s;
    }
}
__global__ void embed(const int *tokens, const float *table, float *out, int n, int dim)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int j = blockIdx.y * blockDim.y + threadIdx.y;
    if (i < n && j < dim)
        out[i * dim + j] = table[tokens[i] * dim + j];
}
"""


@pytest.mark.parametrize("source,filename,arrays", [
    (_without_pragmas(GATHER_CU), "gather.cu", {"gather": "idx"}),
    (_without_pragmas(CSR_CU), "spmv.cu", {"spmv": "rowptr, col"}),
    (ELL_EMBED_CU, "ell.cu", {"ell": "cols", "embed": "tokens"})])
@pytest.mark.parametrize("target", ["cuda", "opencl"])
def test_arrays_indexed_by_data_get_an_extent_without_pragmas(source, filename, arrays, target):
    """Without pragmas, the values of an index array are read as variables in [0,
    FREE_VALUES) (verify/extents.py) and the array is filled so: the gathered array's
    extent is what those values reach (x[col[j]]: 64; table[tokens[i] * dim + j]: 64 rows),
    a CSR row pointer is sorted in range."""
    from naiveopt.verify.indices import FREE_VALUES

    result = naiveopt.optimize(source, filename=filename, target=target)
    for k in result.kernels:
        v = k.verification
        assert v.status == "passed", (k.name, v.detail)
        assert f"index arrays {arrays[k.name]} filled in range" in v.detail
    embed = next((k for k in result.kernels if k.name == "embed"), None)
    if embed is not None:
        dim = int(re.search(r"inferred \([^)]*\bdim=(\d+)", embed.verification.detail).group(1))
        table = embed.verification.facts["arrays"]["table"]["elements"]["inferred"]
        assert table == FREE_VALUES * dim


@pytest.mark.parametrize("body,why", [
    # a scatter's random values meet: two threads store to one element (a race)
    ("out[idx[i]] = A[i];", "the index of out[idx[i]] depends on a value read from an array"),
    # a value entering with a negative sign reaches below the array
    ("out[i] = A[N - idx[i]];", "the index of A[N - idx[i]] depends on a value read"),
    # a float's value is not an index array's
    ("out[i] = A[(int)A[i]];", "the index of A[(int) A[i]] depends on a value read"),
])
def test_data_indices_that_stay_unverified(body, why):
    source = ("__global__ void g(const int *idx, const float *A, float *out, int N)\n{\n" +
              GID + f"    if (i < N) {body}\n}}\n")
    result = naiveopt.optimize(source, filename="g.cu")
    (k,) = result.kernels
    assert k.verification.status == "skipped"
    assert why in k.unverified, k.unverified


def test_a_pragma_shape_keeps_a_computed_index_unresolved():
    """With a pragma's extent for one array, an index array in a computed index keeps the
    0/1 fill (values up to FREE_VALUES might overrun the pragma's array)."""
    source = ("#pragma naiveopt sizes(N=300, W=7) array(A, 2, W)\n"
              "__global__ void g(const int *idx, const float *A, float *out, int N, int W)\n{\n"
              + GID + "    if (i < N) out[i] = A[idx[i] * W + 3];\n}\n")
    v = _verify(source, "g.cu")
    assert v.status == "passed", v.detail
    assert "index arrays" not in v.detail


def test_index_facts():
    from naiveopt.frontend import parse_module
    from naiveopt.verify.indices import index_facts

    (proc,) = parse_module("spmv.cu", CSR_CU, {}).procedures
    fills, unresolved = index_facts(proc, {"val": ["nnz"], "col": ["nnz"], "x": ["m"]})
    assert fills["rowptr"].sorted and sorted(fills["rowptr"].bounds) == [
        ("col", True), ("val", True)]
    assert fills["col"].bounds == [("x", False)] and not fills["col"].sorted
    assert not unresolved


def test_a_computed_index_that_crashes_the_naive_kernel_is_data_dependent():
    source = ("#pragma naiveopt sizes(N=300, W=64) array(idx, N) array(A, N, W) "
              "array(out, N)\n"
              "__global__ void g(const int *idx, float *A, float *out, int N, int W)\n{\n" + GID +
              "    if (i < N) A[idx[i] * W * 30000000 + 5] = 1.0f;\n}\n")
    v = _verify(source, "g.cu")
    assert v.status == "skipped", v.detail
    assert "data-dependent indices through idx" in v.detail


def test_a_computed_index_the_naive_run_survives_by_luck_is_still_data_dependent(monkeypatch):
    """An out-of-range write may land on mapped memory in the naive run and crash only the
    output's run (seen in CI): the crash is the random index data's, never a failure."""
    from naiveopt.verify import check

    real, calls = check._launch, []

    def naive_survives(program, kernel, sizes, args, options):
        calls.append(program)
        if len(calls) > 1:           # the naive run first, then the output's two tries
            raise opencl.KernelCrash("the kernel crashed the OpenCL runtime (exit -11)")
        return real(program, kernel, sizes, args, options)

    monkeypatch.setattr(check, "_launch", naive_survives)
    source = ("#pragma naiveopt sizes(N=300, W=64) array(idx, N) array(A, N, W)\n"
              "__global__ void g(const int *idx, float *A, int N, int W)\n{\n" + GID +
              "    if (i < N) A[idx[i] * W + 5] = 1.0f;\n}\n")
    v = _verify(source, "g.cu")
    assert v.status == "skipped", v.detail
    assert "data-dependent indices through idx" in v.detail


def test_two_sizes_lines_are_two_sets_and_split_lines_one():
    from naiveopt.verify.spec import pragma_size_sets

    assert pragma_size_sets([["n=4"], ["n=5"]]) == {"pragma": {"n": 4}, "pragma2": {"n": 5}}
    assert pragma_size_sets([["n=4"], ["m=6"]]) == {"pragma": {"n": 4, "m": 6}}
    assert pragma_size_sets([["n=4", "m=6"], ["n=5"]]) == {
        "pragma": {"n": 4, "m": 6}, "pragma2": {"n": 5, "m": 6}}


def test_an_untransformed_kernel_is_never_failed(monkeypatch):
    """A kernel no optimization pass changed cannot be miscompiled by one: a difference is
    reported as not verified, with the reason."""
    from naiveopt.verify import check

    real = check.first_mismatch
    monkeypatch.setattr(check, "first_mismatch", lambda want, have: 0)
    result = naiveopt.optimize(DAXPY_CU, filename="daxpy.cu", opt=False)
    assert result.kernels[0].verification.status == "skipped"
    assert "no optimization pass changed this kernel" in result.kernels[0].verification.detail
    monkeypatch.setattr(check, "first_mismatch", real)


HALF_CL = """\
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
#pragma naiveopt sizes(N=300) array(A, N) array(B, N)
__kernel void hk(__global const half *A, __global half *B, int N)
{
    int i = get_global_id(0);
    if (i < N) B[i] = A[i] * (half)2;
}
"""


def test_half_without_fp16_is_not_verified_with_the_reason(monkeypatch):
    monkeypatch.setattr(opencl, "device_has", lambda ext: ext != "cl_khr_fp16")
    v = _verify(HALF_CL, "hk.cl")
    assert v.status == "skipped"
    assert "the OpenCL device has no fp16" in v.detail


DAXPY_TOML = """\
[sizes]
test = { n = 1024 }
odd = { n = 1001 }

[[kernel]]
name = "daxpy"
threads = ["n", "1"]
block = [256, 1]
args = [
  { name = "y", role = "inout", type = "double", shape = ["n"] },
  { name = "x", role = "in", type = "double", shape = ["n"] },
  { name = "a", role = "scalar", type = "double", value = "2.5" },
  { name = "n", role = "size", type = "int" },
]
reference = { y = "a * x + y" }
"""


@pytest.mark.parametrize("target", ["cuda", "opencl"])
def test_double_kernel_with_metadata_verifies_at_test_and_odd_sizes(tmp_path, target):
    (tmp_path / "daxpy.toml").write_text(DAXPY_TOML)
    source = "\n".join(DAXPY_CU.splitlines()[2:]) + "\n"
    path = tmp_path / "daxpy.cu"
    path.write_text(source)
    result = naiveopt.optimize(source, filename=str(path), target=target)
    v = result.kernels[0].verification
    assert v.status == "passed", v.detail
    assert [c.split()[0] for c in v.checks] == ["test", "odd"]
    assert "NumPy reference" in v.detail


def test_a_cuda_variable_named_half_is_not_taken_for_fp16(monkeypatch):
    """'half' is an identifier in CUDA (its OpenCL translation is item 8's): only a
    declaration or a cast of the type asks for fp16."""
    from naiveopt.verify import check
    from naiveopt.verify.spec import ArgSpec, KernelSpec

    monkeypatch.setattr(opencl, "device_has", lambda ext: ext != "cl_khr_fp16")
    kernel = KernelSpec("h", ("N", "1"), None, [ArgSpec("A", "inout", "float", ["N"])])

    def program(body):
        return check.Program(body, [], {})

    check._check_device(kernel, program("int half = N / 2; x = y * half;"), program(""))
    # a comment is no use: "every pixel at half intensity" (a probe's dimming kernel was
    # written unverified for its comment)
    check._check_device(kernel, program("// every pixel at half intensity\n/* half x = 1;\n"
                                        "(half)y */ x = y / 2;"), program(""))
    for uses in ("half x = 1;", "y = (half)x;", "half2 v;"):
        with pytest.raises(check.Unverifiable, match="no fp16"):
            check._check_device(kernel, program(uses), program(""))


def test_an_internal_error_in_verification_is_not_a_pass(monkeypatch):
    from naiveopt.verify import check

    def broken(*args, **kw):
        raise RuntimeError("boom")

    monkeypatch.setattr(check, "_naive_run", broken)
    v = _verify(DAXPY_CU, "daxpy.cu")
    assert v.status == "skipped" and "internal error RuntimeError: boom" in v.detail


def test_vector_element_arrays_hold_all_their_lanes():
    """A float4 array of n elements is 4n floats: verification allocated n floats, so the
    naive kernel itself ran past them (PoCL crashed, 'double free or corruption')."""
    import numpy as np

    from naiveopt.ir.elements import vector_element
    from naiveopt.verify.check import make_arg
    from naiveopt.verify.spec import ArgSpec

    assert vector_element("float4")[1] == 4 and vector_element("float3")[1] == 4
    assert vector_element("float")[1] == 1 and vector_element("int2")[0].dtype == "int32"
    arg = make_arg(ArgSpec("x", "in", "float4", ["n"]), {"n": 5}, np.random.default_rng(0))
    assert arg.dtype == np.float32 and arg.size == 20
