"""C literals reproduced exactly and read by C's rules (issue 11 item 1), and identifiers that
the other dialect reserves renamed by the translations (item 8)."""
from __future__ import annotations

import os
import shutil
import re

import numpy as np
import pytest

import naiveopt
from conftest import compile_cuda
from naiveopt.errors import NaiveoptError
from naiveopt.ir.cgen import to_c
from naiveopt.frontend import fixed_macros, parse_module
from naiveopt.ir.literals import (float_suffix, integer_literals_to_decimal, integer_value,
                                  literal_token, opencl_literal)
from naiveopt.passes.manager import PassContext, run_passes
from naiveopt.passes.pipeline import front_passes
from naiveopt.verify import opencl
from naiveopt.verify.expr import evaluate

# ------------------------------------------------------------------------ the grammar


@pytest.mark.parametrize("text, token", [
    ("1e-5f)", "1e-5f"), ("1e-5;", "1e-5"), ("2.5E+3f*x", "2.5E+3f"), ("1e-5L ", "1e-5L"),
    ("0x1.8p-3f,", "0x1.8p-3f"), ("0X1P+2", "0X1P+2"), (".5e-1F]", ".5e-1F"), ("1.f", "1.f"),
    ("10u)", "10u"), ("10UL ", "10UL"), ("7llu", "7llu"), ("9Ull", "9Ull"), ("010+", "010"),
    ("0x10u", "0x10u"), ("1'000)", "1'000"), ("'a' + 1", "'a'"), ("'\\x41')", "'\\x41'"),
    ("'\\101'", "'\\101'"), ("'\\''", "'\\''"), ("L'a'", "L'a'"), ("x1", ""),
])
def test_literal_token_follows_the_pp_number_grammar(text, token):
    assert literal_token(text) == token


@pytest.mark.parametrize("text, value", [
    ("0x10", 16), ("0X1f", 31), ("010", 8), ("0", 0), ("00", 0), ("10u", 10), ("10UL", 10),
    ("10uLL", 10), ("10llu", 10), ("0x10ul", 16), ("017L", 15), ("0b101", 5), ("1'000", 1000),
    ("'a'", 97), ("'\\n'", 10), ("'\\x41'", 65), ("'\\101'", 65), ("'\\0'", 0),
    ("1e5", None), ("1.0", None), ("08", None), ("10lul", None), ("N", None), ("0x", None),
])
def test_integer_value_reads_base_and_suffix(text, value):
    assert integer_value(text) == value


@pytest.mark.parametrize("text, suffix", [
    ("1e-5f", "f"), ("1e-5", ""), ("2.5E+3F", "f"), ("1e-5L", "l"), ("0x1.8p3", ""),
    ("1.", ""), (".5", ""), ("1h", None), ("1.0h", "h"), ("010", None), ("1000", None),
])
def test_float_suffix(text, suffix):
    assert float_suffix(text) == suffix


def test_opencl_spelling_of_cuda_literals():
    assert opencl_literal("1e-5f") == ("1e-5f", None)
    assert opencl_literal("1e-5") == ("1e-5", None)          # a double stays double
    assert opencl_literal("10ULL") == ("10UL", None)
    assert opencl_literal("7llu") == ("7lu", None)
    assert opencl_literal("0b110u") == ("0x6u", None)
    assert opencl_literal("1'000'000") == ("1000000", None)
    assert opencl_literal("'a'") == ("'a'", None)
    text, note = opencl_literal("1e-5L")
    assert text == "1e-5" and "long double" in note


def test_define_values_are_read_as_c():
    assert integer_literals_to_decimal("(010 + 0x10u) * 2UL + W") == "(8 + 16) * 2 + W"
    fixed, _ = fixed_macros("#define A 010\n#define B 0x10u\n#define C (A + B)\n", {})
    assert fixed == {"A": 8, "B": 16, "C": 24}


def test_evaluator_accepts_c_names_that_are_python_keywords():
    assert evaluate("ceil(class, 16) + global", {"class": 33, "global": 1}) == 4


# --------------------------------------------------------------- kernels with literals

LITERALS = ["1e-5f", "1e-5", "2.5E+3f", "0x1.8p3f", "0X1P-2", ".5e+1F", "1.f", "0x10", "010",
            "10u", "10UL", "9Ul", "0x1Fu", "'a'", "'\\x41'", "'\\101'", "'\\n'"]

ALL_FORMS = """\
#pragma naiveopt sizes(n=1000) threads(n) block(128) array(in, n) array(out, n)
__global__ void lit(const float *in, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = in[i] * 1e-5f + 0x10 + 010 + 2.5E+3f * 1e-5 + 0x1.8p3f * 0X1P-2 + .5e+1F
                 + 1.f + 10u + 10UL + 9Ul + 0x1Fu + 'a' + '\\x41' + '\\101' + '\\n';
}
"""


@pytest.mark.parametrize("target", ["cuda", "opencl"])
def test_every_literal_form_round_trips_verbatim_and_verifies(target, tmp_path):
    result = naiveopt.optimize(ALL_FORMS, filename="lit.cu", target=target)
    for literal in LITERALS:
        assert re.search(rf"(?<![\w.']){re.escape(literal)}(?![\w.'])", result.code), literal
    assert "1e)" not in result.code and "1e " not in result.code
    (k,) = result.kernels
    assert k.verification.status == "passed", k.verification
    if target == "cuda" and shutil.which("nvcc"):
        out = tmp_path / "lit.cu"
        out.write_text(result.code)
        done = compile_cuda(str(out), str(tmp_path))
        assert done.returncode == 0, done.stderr


SIMPLE = """\
#pragma naiveopt sizes(n=300) threads(n) block(64) array(in, n) array(out, n)
__global__ void simple(const float *in, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = in[i] * 1e-5f + 0x10 + 010;
}
"""


def test_signed_exponent_kernel_computes_the_c_values():
    """The verifier compares naive with optimized (both through the same front end), so the
    values are checked against C's own reading: 1e-5f, 0x10 = 16, 010 = 8 (octal)."""
    result = naiveopt.optimize(SIMPLE, filename="simple.cu", target="opencl")
    assert "in[i] * 1e-5f + 0x10 + 010" in result.code
    assert result.kernels[0].verification.status == "passed"
    n = 300
    data = np.linspace(-3, 3, n).astype(np.float32)
    out = np.zeros(n, dtype=np.float32)
    got = opencl.run(result.code, "simple", [], [data, out, np.int32(n)], (320, 1), (64, 1))
    want = [float(x) * 1e-5 + 16 + 8 for x in data.tolist()]
    assert max(abs(a - b) for a, b in zip(got[-1].tolist(), want)) < 1e-4


def _front(source: str, name: str = "k.cu"):
    module = parse_module(name, source, {})
    run_passes(front_passes()[:-1], PassContext(module, "cuda", "none"))   # all but nvcc
    return module.procedures[0]


def test_octal_and_suffixed_constants_in_index_and_loop_analysis():
    proc = _front("""\
__global__ void k(const float *A, float *B, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float s = 0.0f;
    for (int k = 0; k < n; k += 010)
        s += A[i + 010] + A[i + 0x10u] + A[i + 10UL];
    if (i < n)
        B[i] = s;
}
""")
    constants = sorted(int(m.decomposition.constant) for m in proc.memory_expressions
                       if m.array == "A")
    assert constants == [8, 10, 16]
    assert proc.loops[0].step == 8


@pytest.mark.parametrize("dim, axis", [("0u", "x"), ("1U", "y"), ("0x2", "z")])
def test_work_item_dimension_with_suffix(dim, axis):
    """``get_global_id(0u)`` is dimension 0 (its value read, suffix and base aside)."""
    module = parse_module("k.cl", f"""\
__kernel void k(__global float *A, int n)
{{
    int i = get_global_id({dim});
    if (i < n)
        A[i] = 1.0f;
}}
""", {})
    run_passes(front_passes()[:1], PassContext(module, "cuda", "none"))
    assert f"int i = blockIdx.{axis} * blockDim.{axis} + threadIdx.{axis};" in \
        to_c(module.procedures[0].body)


def test_long_double_literal_is_double_in_opencl_with_a_remark():
    source = SIMPLE.replace("1e-5f", "1e-5L")
    result = naiveopt.optimize(source, filename="ld.cu", target="opencl")
    assert "in[i] * 1e-5 + 0x10" in result.code and "1e-5L" not in result.code
    assert any("long double literal '1e-5L' written as double" in r.message
               for r in result.remarks)
    assert result.kernels[0].verification.status == "passed"
    assert "1e-5L" in naiveopt.optimize(source, filename="ld.cu", verify=False).code


def test_prefixed_character_literal_is_a_located_error():
    with pytest.raises(NaiveoptError, match=r"k.cu:6:\d+: error: .*L'a'"):
        naiveopt.optimize(SIMPLE.replace("010", "L'a'"), filename="k.cu", verify=False)


# ------------------------------------------------------- names reserved in the other dialect

CUDA_KEYWORDS = """\
#pragma naiveopt sizes(n=500) threads(n) block(128) array(local, n) array(global, n)
__device__ float twice(float constant)
{
    float half = constant * 2.0f;
    return half;
}

__global__ void kw(const float *local, float *global, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float half = 0.5f;
    int constant = 3;
    float kernel = 2.0f, uint = 1.0f, barrier = 1.0f, float8 = 2.0f;
    if (i < n)
        global[i] = local[i] * half + constant + twice(kernel) + uint + barrier + float8;
}
"""


@pytest.mark.parametrize("target", ["cuda", "opencl"])
def test_cuda_names_reserved_in_opencl_are_renamed(target, tmp_path):
    result = naiveopt.optimize(CUDA_KEYWORDS, filename="kw.cu", target=target)
    (k,) = result.kernels
    assert k.verification.status == "passed", k.verification
    assert "global match" in k.verification.detail      # the user's names
    assert k.geometry.thread_space[0] == "n"
    if target == "cuda":                                   # the user's names kept
        assert "float half = 0.5f;" in result.code
        assert "(const float *local, float *global, int n)" in result.code
        if shutil.which("nvcc"):
            out = tmp_path / "kw.cu"
            out.write_text(result.code)
            assert compile_cuda(str(out), str(tmp_path)).returncode == 0
    else:
        assert "__kernel void kw(__global const float *local_, __global float *global_, " \
               "int n)" in result.code
        assert "float half_ = 0.5f;" in result.code
        assert "float twice(float constant_)" in result.code
        for word in ("half", "local", "global", "constant", "kernel", "uint", "barrier",
                     "float8"):
            assert not re.search(rf"\b{word}\b(?!\()", result.code.split("__kernel")[1]
                                 .replace("__global", "")), word
        assert any("'half' is reserved in OpenCL C: written 'half_'" in r.message
                   for r in result.remarks)


def test_renamed_name_avoids_collisions():
    source = CUDA_KEYWORDS.replace("int constant = 3;", "int constant = 3, half_ = 1;") \
        .replace("+ float8;", "+ float8 + half_;")
    result = naiveopt.optimize(source, filename="kw.cu", target="opencl")
    assert "float half_1 = 0.5f;" in result.code and "int half_ = 1;" in result.code
    assert result.kernels[0].verification.status == "passed"


OPENCL_KEYWORDS = """\
#pragma naiveopt sizes(class=400) block(64) array(old, class) array(new, class)
float scale(float this)
{
    float template = this * 0.5f;
    return template;
}

__kernel void kwcl(__global const float *old, __global float *new, int class)
{
    int i = get_global_id(0);
    float threadIdx = 0.5f, blockDim = 1.0f;
    int dim3 = 2, warpSize = 1;
    if (i < class)
        new[i] = old[i] * threadIdx + blockDim + dim3 + warpSize + scale(old[i]);
}
"""


def test_opencl_names_reserved_in_cuda_round_trip(tmp_path):
    result = naiveopt.optimize(OPENCL_KEYWORDS, filename="kwcl.cl", target="cuda")
    (k,) = result.kernels
    assert k.verification.status == "passed", k.verification
    assert "__global__ void kwcl(const float *old, float *new_, int class_)" in result.code
    assert "float threadIdx_ = 0.5f;" in result.code and "int dim3_ = 2;" in result.code
    assert "__device__ float scale(float this_)" in result.code
    assert k.geometry.thread_space[0] == "class"           # the host's argument, by position
    if shutil.which("nvcc"):
        out = tmp_path / "kwcl.cu"
        out.write_text(result.code)
        done = compile_cuda(str(out), str(tmp_path))
        assert done.returncode == 0, done.stderr
    back = naiveopt.optimize(OPENCL_KEYWORDS, filename="kwcl.cl")      # OpenCL again
    assert back.kernels[0].verification.status == "passed"
    assert "__kernel void kwcl(__global const float *old, __global float *new, int class)" \
        in back.code
    assert "float threadIdx = 0.5f;" in back.code and "int dim3 = 2;" in back.code


CUDA_RESERVED_GLOBALS = """\
__constant__ int half;
__constant__ float local[4];
__constant__ float kernel[3] = {0.25f, 0.5f, 0.25f};
__device__ float twice(float x) { return 2.0f * x * kernel[1]; }

__global__ void shift(const float *in, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = in[(i + half) % n] * local[i % 4] + twice(in[i]) + kernel[0];
}
"""


@pytest.mark.parametrize("target", ["cuda", "opencl"])
def test_file_scope_data_with_names_reserved_in_opencl(target, tmp_path):
    """``__constant__ int half;`` is an OpenCL kernel argument (host-filled) or program-scope
    data (initialized) there: renamed like a local, the host's names kept in the header and
    in verification (``half`` is a size the sizes set)."""
    result = naiveopt.optimize(CUDA_RESERVED_GLOBALS, filename="g.cu", target=target)
    (k,) = result.kernels
    assert k.verification.status == "passed", k.verification
    assert "half=" in k.verification.detail, k.verification
    if target == "cuda":
        assert "__constant__ int half;" in result.code
        assert "cudaMemcpyToSymbol(half, host_half, sizeof(int))" in result.code
    else:
        body = result.code.split("__kernel")[1]
        assert "int half_" in body and "__constant float *local_" in body
        assert "__constant float kernel_[3] = {0.25f, 0.5f, 0.25f};" in result.code
        assert "float kernel[3] (program-scope __constant kernel_, initialized here)" \
            in result.code
        assert "(the data of the input's __constant__ int half)" in result.code
        for word in ("half", "local", "kernel"):
            assert not re.search(rf"(?<!__)\b{word}\b(?!\()", body.replace("__kernel", "")
                                 .replace("__local", "")), word


def test_reserved_kernel_name_is_a_located_error():
    source = CUDA_KEYWORDS.replace("void kw(", "void half(")
    with pytest.raises(NaiveoptError, match=r"kw.cu:\d+:\d+: error: kernel name 'half'"):
        naiveopt.optimize(source, filename="kw.cu", target="opencl", verify=False)


def test_lit_literals_file_exists():
    assert os.path.exists(os.path.join(os.path.dirname(__file__), "lit", "literals.cu"))


def test_texture_over_a_renamed_array_names_the_users_array():
    source = """\
#pragma naiveopt sizes(n=300) threads(n) block(64) array(local, n) array(out, n)
__global__ void tex(const float *local, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = local[i] * 2.0f;
}
"""
    result = naiveopt.optimize(source, filename="tex.cu", target="opencl",
                               options={"memory": "texture"})
    (k,) = result.kernels
    assert k.verification.status == "passed", k.verification
    assert "read_only image1d_buffer_t local_" in result.code
    assert "texture local_: image1d_buffer over local (" in result.code
    (t,) = k.textures
    assert t["param"] == "local_" and t["array"] == "local" and t["argument"] == 0
    assert t["texels"] == "n"


def test_double_literal_argument_of_a_float_function_in_opencl():
    """Fuzz seed 2222 case 96: CUDA's fmaxf(x, 2.0) became OpenCL's ambiguous fmax(float,
    double); the literal is converted to float, as CUDA converts it."""
    source = SIMPLE.replace("in[i] * 1e-5f + 0x10 + 010", "fmaxf(in[i], 0.25) + 1e-5")
    result = naiveopt.optimize(source, filename="fm.cu", target="opencl")
    assert "fmax(in[i], (float)0.25) + 1e-5" in result.code
    assert result.kernels[0].verification.status == "passed"
