"""Index decomposition, 2-D recovery, read/write classification, loop and thread-space
analysis on small kernels with tricky index forms."""
from __future__ import annotations

import os
import re

import pytest
import sympy

from conftest import KERNELS_DIR
from naiveopt.frontend import parse_module
from naiveopt.ir.cgen import to_c
from naiveopt.passes.manager import PassContext, run_passes
from naiveopt.passes.pipeline import front_passes


def analyse(source: str, filename: str = "k.cu", defines: dict | None = None):
    """Parse ``source`` and run the analysis passes (no nvcc: arch 'none')."""
    module = parse_module(filename, source, defines or {})
    ctx = PassContext(module, "cuda", "none")
    run_passes(front_passes(), ctx)
    return module


def kernel(source: str, filename: str = "k.cu"):
    module = analyse(source, filename)
    assert len(module.procedures) == 1
    return module.procedures[0]


def sym(text: str) -> sympy.Expr:
    """A sympy expression over integer symbols named as in ``text``."""
    names = set(re.findall(r"[A-Za-z_]\w*", text))
    return sympy.sympify(text, locals={n: sympy.Symbol(n, integer=True) for n in names})


def same(expr, text: str) -> bool:
    return sympy.expand(sympy.sympify(expr) - sym(text)) == 0


def mems(proc, array: str):
    return [m for m in proc.memory_expressions if m.array == array]


def only(proc, array: str):
    found = mems(proc, array)
    assert len(found) == 1, [m.describe() for m in proc.memory_expressions]
    return found[0]


def coeffs(d) -> tuple[dict, dict]:
    return ({k: str(v) for k, v in d.predefined.items()}, {k: str(v) for k, v in d.loop.items()})


IDS_2D = ("int x = blockIdx.x * blockDim.x + threadIdx.x;\n"
          "int y = blockIdx.y * blockDim.y + threadIdx.y;\n")


# ------------------------------------------------------------------ global ids, any order
@pytest.mark.parametrize("expr", [
    "threadIdx.x + blockDim.x * blockIdx.x",
    "blockDim.x * blockIdx.x + threadIdx.x",
    "blockIdx.x * blockDim.x + threadIdx.x",
    "threadIdx.x + blockIdx.x * blockDim.x",
])
def test_global_id_in_any_operand_order(expr):
    proc = kernel(f"__global__ void k(float *A) {{ A[{expr}] = 1.0f; }}")
    m = only(proc, "A")
    assert same(m.index, "idx")
    assert coeffs(m.decomposition) == ({"idx": "1"}, {})
    assert m.decomposition.constant == 0 and m.decomposition.resolved
    assert m.is_write and not m.is_read


def test_swapped_row_major_operands():
    proc = kernel("__global__ void k(float *A, int W) {\n" + IDS_2D +
                  "A[x + W * y] = 1.0f; }")
    m = only(proc, "A")
    assert m.two_d is not None
    assert same(m.two_d[0], "idy") and same(m.two_d[1], "idx")
    assert str(m.width) == "W"
    assert coeffs(m.decomposition) == ({"idx": "1", "idy": "W"}, {})


def test_constant_offset_goes_to_x_and_constant_term():
    proc = kernel("__global__ void k(float *A, int W) {\n" + IDS_2D +
                  "A[(y) * W + x + 1] = 1.0f; }")
    m = only(proc, "A")
    assert same(m.two_d[0], "idy") and same(m.two_d[1], "idx + 1")
    assert str(m.width) == "W"
    assert m.decomposition.constant == 1
    assert coeffs(m.decomposition) == ({"idx": "1", "idy": "W"}, {})


def test_shifted_row_and_column():
    proc = kernel("__global__ void k(float *A, int W) {\n" + IDS_2D +
                  "A[(y + 1) * W + x - 1] = 1.0f; }")
    m = only(proc, "A")
    assert same(m.two_d[0], "idy + 1") and same(m.two_d[1], "idx - 1")
    assert same(m.decomposition.constant, "W - 1")


def test_index_through_single_definition_locals():
    proc = kernel("__global__ void k(float *A, float *B, int W) {\n"
                  "int row = blockIdx.x * blockDim.x + threadIdx.x;\n"
                  "int base = row * W;\n"
                  "float s = 0.0f;\n"
                  "for (int i = 0; i < W; i++) s += A[base + i];\n"
                  "B[row] = s; }")
    a = only(proc, "A")
    assert same(a.index, "idx*W + i")
    assert same(a.two_d[0], "idx") and same(a.two_d[1], "i")
    assert str(a.width) == "W"
    assert coeffs(a.decomposition) == ({"idx": "W"}, {"i": "1"})
    assert a.loops == ["i"] and a.is_read and not a.is_write
    b = only(proc, "B")
    assert same(b.index, "idx") and b.is_write


def test_paper_macro_accessor_with_undeclared_ids():
    module = analyse("#define A(y,x) A[(y)*width+(x)]\n"
                     "__global__ void k(float *A, float *C, int width) {\n"
                     "  float sum = 0;\n"
                     "  for (int i = 0; i < width; i = i + 1) sum += A(idx, i);\n"
                     "  C[idy * width + idx] = sum; }")
    assert set(module.paper_ids) == {"idx", "idy"}
    proc = module.procedures[0]
    a = only(proc, "A")
    assert same(a.two_d[0], "idx") and same(a.two_d[1], "i")
    assert str(a.width) == "width"
    assert coeffs(a.decomposition) == ({"idx": "width"}, {"i": "1"})
    c = only(proc, "C")
    assert same(c.two_d[0], "idy") and same(c.two_d[1], "idx")
    assert proc.loops[0].canonical and proc.loops[0].step == 1


def _library_kernel(name: str):
    path = os.path.join(KERNELS_DIR, name)
    with open(path, encoding="utf-8") as fh:
        return analyse(fh.read(), path).procedures[0]


def test_library_macro_kernel_recovers_2d():
    proc = _library_kernel("conv_macro.cu")
    c = only(proc, "C")
    assert c.is_write and same(c.two_d[0], "idy") and same(c.two_d[1], "idx")
    f = only(proc, "F")
    assert same(f.two_d[0], "i") and same(f.two_d[1], "j") and str(f.width) == "ksize"
    a = only(proc, "A")
    assert same(a.index, "(idy + i) * (width + ksize - 1) + idx + j")
    assert coeffs(a.decomposition) == ({"idx": "1", "idy": str(sym("width + ksize - 1"))},
                                       {"i": str(sym("width + ksize - 1")), "j": "1"})
    assert [lp.iterator for lp in proc.loops] == ["i", "j"]
    assert proc.loops[1].parent is proc.loops[0] and proc.loops[1].depth == 1


@pytest.mark.parametrize("name, width", [("conv.cu", "W + K - 1"),
                                         ("conv_macro.cu", "width + ksize - 1")])
def test_compound_row_width_recovers_2d(name, width):
    proc = _library_kernel(name)
    m = next(m for m in proc.memory_expressions if m.array in ("A", "input"))
    assert m.two_d is not None
    assert "idy" not in {s.name for s in m.two_d[1].free_symbols}, m.describe()
    assert same(m.two_d[0], "idy + i") and same(m.two_d[1], "idx + j")
    assert same(m.width, width)


def test_literal_width():
    proc = kernel("__global__ void k(float *A) {\n" + IDS_2D + "A[y * 1024 + x] = 1.0f; }")
    m = only(proc, "A")
    assert same(m.two_d[0], "idy") and same(m.two_d[1], "idx")
    assert m.width == 1024
    assert coeffs(m.decomposition) == ({"idx": "1", "idy": "1024"}, {})


def test_object_macro_width_kept_by_name():
    module = analyse("#define WIDTH 256\n__global__ void k(float *A) {\n" + IDS_2D +
                     "A[y * WIDTH + x] = 1.0f; }")
    assert module.macros == {"WIDTH": "256"}
    m = only(module.procedures[0], "A")
    assert str(m.width) == "WIDTH"
    assert same(m.two_d[0], "idy") and same(m.two_d[1], "idx")


def test_linear_access_in_loop_over_rows():
    proc = kernel("__global__ void k(float *A, float *B, int width, int n) {\n"
                  "float s = 0;\n"
                  "for (int i = 0; i < n; i++) s += A[i * width + threadIdx.x];\n"
                  "B[threadIdx.x] = s; }")
    a = only(proc, "A")
    assert same(a.two_d[0], "i") and same(a.two_d[1], "tidx")
    assert str(a.width) == "width"
    assert coeffs(a.decomposition) == ({"tidx": "1"}, {"i": "width"})
    assert a.decomposition.coefficient("tidx") == 1
    assert same(a.decomposition.coefficient("i"), "width")
    assert a.decomposition.coefficient("idx") == 0


def test_opencl_global_id_decomposes_to_idx():
    proc = kernel("__kernel void k(__global float *A, int n) {\n"
                  "  int i = get_global_id(0);\n  if (i < n) A[i] = 0.0f; }", "k.cl")
    m = only(proc, "A")
    assert same(m.index, "idx")
    assert coeffs(m.decomposition) == ({"idx": "1"}, {})
    assert proc.pragma.global_dim == ("n", "1")


def test_opencl_spelled_out_global_id_decomposes_to_idx():
    proc = kernel("__kernel void k(__global float *A) {\n"
                  "  A[get_local_id(0) + get_local_size(0) * get_group_id(0)] = 0.0f; }",
                  "k.cl")
    assert same(only(proc, "A").index, "idx")


def test_data_dependent_index_is_unresolved():
    proc = kernel("__global__ void k(float *A, int *B) {\n"
                  "int i = blockIdx.x * blockDim.x + threadIdx.x;\n  A[B[i]] = 1.0f; }")
    a = only(proc, "A")
    assert a.decomposition.unresolved and not a.decomposition.resolved
    assert a.two_d is None
    assert a.decomposition.predefined == {} and a.decomposition.loop == {}
    b = only(proc, "B")          # the inner access is recorded too, as a resolved read
    assert b.is_read and not b.is_write and same(b.index, "idx")


@pytest.mark.parametrize("index", ["threadIdx.x / 2", "threadIdx.x % 7",
                                   "threadIdx.x * threadIdx.y", "threadIdx.x * threadIdx.x",
                                   "n * threadIdx.x * threadIdx.x + 1"])
def test_unmodelled_terms_are_unresolved(index):
    m = only(kernel(f"__global__ void k(float *A, int n) {{ A[{index}] = 0.0f; }}"), "A")
    assert m.decomposition.unresolved
    assert m.decomposition.predefined == {}


def test_linear_terms_keep_symbolic_coefficients():
    m = only(kernel("__global__ void k(float *A, int n, int w) {\n"
                    "  for (int j = 0; j < n; j++) A[threadIdx.x * (n + 1) + 3 * w * j - "
                    "threadIdx.x / 2 + 2] = 0.0f; }"), "A")
    d = m.decomposition
    assert coeffs(d) == ({"tidx": "n + 1"}, {"j": "3*w"})
    assert [str(u) for u in d.unresolved] and d.constant == 2


def test_local_reassigned_in_loop_is_not_an_alias():
    proc = kernel("__global__ void k(float *A, int n) {\n"
                  "int j = threadIdx.x;\n"
                  "for (int i = 0; i < n; i++) { A[j] = 1.0f; j = j + 2; } }")
    m = only(proc, "A")
    assert m.decomposition.unresolved
    assert "tidx" not in m.decomposition.predefined
    assert m.loops == ["i"]


def test_shift_is_a_multiplication():
    m = only(kernel("__global__ void k(float *A) { A[(threadIdx.x << 2) + 1] = 0.0f; }"), "A")
    assert same(m.index, "4*tidx + 1")
    assert coeffs(m.decomposition) == ({"tidx": "4"}, {})
    assert m.decomposition.constant == 1


def test_shared_2d_array():
    proc = kernel("__global__ void k(float *A) {\n"
                  "__shared__ float t[16][17];\n"
                  "t[threadIdx.y][threadIdx.x] = A[threadIdx.x];\n"
                  "__syncthreads();\n"
                  "A[threadIdx.x] = t[threadIdx.x][threadIdx.y]; }")
    w, r = mems(proc, "t")
    assert w.space == r.space == "shared"
    assert w.is_write and not w.is_read and r.is_read and not r.is_write
    assert same(w.index, "17*tidy + tidx") and w.width == 17
    assert same(w.two_d[0], "tidy") and same(w.two_d[1], "tidx")
    assert same(r.two_d[0], "tidx") and same(r.two_d[1], "tidy")
    assert [(m.space, m.kind) for m in mems(proc, "A")] == [("global", "read"),
                                                            ("global", "write")]


def test_const_pointer_and_constant_space():
    proc = kernel("__kernel void k(__constant float *F, __global float *A) {\n"
                  "  A[get_global_id(0)] = F[0]; }", "k.cl")
    assert only(proc, "F").space == "constant"
    assert only(proc, "A").space == "global"


# ----------------------------------------------------------------- read / write kinds
@pytest.mark.parametrize("stmt, kind", [
    ("C[i] = 1.0f;", "write"),
    ("C[i] += 2.0f;", "read+write"),
    ("C[i] *= 2.0f;", "read+write"),
    ("C[i]++;", "read+write"),
    ("--C[i];", "read+write"),
    ("x = C[i];", "read"),
    ("x = C[i] * C[i];", "read"),
])
def test_read_write_classification(stmt, kind):
    proc = kernel("__global__ void k(float *C, int n) {\n"
                  "int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                  f"float x = 0.0f;\n  if (i < n) {{ {stmt} }} }}")
    found = mems(proc, "C")
    assert found and all(m.kind == kind for m in found), [m.kind for m in found]
    assert all(same(m.index, "idx") for m in found)


# ----------------------------------------------------------------------------- loops
def loop_of(body: str, params: str = "float *A, int n"):
    proc = kernel(f"__global__ void k({params}) {{\n{body}\n}}")
    assert len(proc.loops) == 1
    return proc.loops[0], proc


def test_canonical_for_loop():
    lp, proc = loop_of("for (int i = 0; i < n; i++) A[i] = 0.0f;")
    assert lp.canonical and lp.why_not_canonical == ""
    assert lp.iterator == "i" and lp.step == 1 and lp.depth == 0 and lp.parent is None
    assert to_c(lp.lower) == "0" and to_c(lp.upper) == "n"
    assert lp.memory_expressions == proc.memory_expressions
    assert coeffs(only(proc, "A").decomposition) == ({}, {"i": "1"})


@pytest.mark.parametrize("header, step", [
    ("int i = 0; i < n; i += 4", 4),
    ("int i = 0; i < n; i = i + 2", 2),
    ("int i = 0; i < n; i = 3 + i", 3),
    ("int i = 0; i < n; ++i", 1),
])
def test_loop_steps(header, step):
    lp, _ = loop_of(f"for ({header}) A[i] = 0.0f;")
    assert lp.canonical and lp.step == step


def test_loop_with_outside_iterator():
    lp, _ = loop_of("int i;\nfor (i = 1; i < n; i++) A[i] = 0.0f;")
    assert lp.canonical and lp.iterator == "i" and to_c(lp.lower) == "1"


def test_less_equal_bound_is_normalised():
    lp, _ = loop_of("for (int i = 0; i <= n; i++) A[i] = 0.0f;")
    assert lp.canonical
    assert sympy.simplify(sym(to_c(lp.upper)) - sym("n + 1")) == 0


def test_mirrored_condition():
    lp, _ = loop_of("for (int i = 0; n > i; i++) A[i] = 0.0f;")
    assert lp.canonical and to_c(lp.upper) == "n"


@pytest.mark.parametrize("body, why", [
    # (stepped last, the while-to-for canonicalization makes it a for loop)
    ("int j = 0;\nwhile (j < n) { j++; A[j - 1] = 0.0f; }", "while"),
    ("int j = 0;\ndo { A[j] = 0.0f; j++; } while (j < n);", "dowhile"),
    ("for (int i = 0; i < n; i++) { A[i] = 0.0f; i += 1; }", "assigns i"),
    ("for (int i = n - 1; i >= 0; i--) A[i] = 0.0f;", "condition"),
    ("for (int i = 0; i < n; i += 0) A[i] = 0.0f;", "step"),
    ("for (int i = 0, j = 0; i < n; i++) A[i + j] = 0.0f;", "iterator"),
])
def test_non_canonical_loops(body, why):
    lp, proc = loop_of(body)
    assert not lp.canonical
    assert why in lp.why_not_canonical
    # the iterator of a non-canonical loop is not a loop symbol
    assert proc.memory_expressions
    assert all(not m.decomposition.loop for m in proc.memory_expressions)


def test_nested_loops_and_their_memory_expressions():
    proc = kernel("__global__ void k(float *A, float *B, int n) {\n"
                  "for (int i = 0; i < n; i++) {\n"
                  "  B[i] = 0.0f;\n"
                  "  for (int j = 0; j < n; j += 2) B[i] += A[i * n + j];\n"
                  "} }")
    outer, inner = proc.loops
    assert (outer.iterator, inner.iterator) == ("i", "j")
    assert inner.parent is outer and inner.depth == 1 and inner.step == 2
    a = only(proc, "A")
    assert a.loops == ["i", "j"]
    assert a in outer.memory_expressions and a in inner.memory_expressions
    assert coeffs(a.decomposition) == ({}, {"i": "n", "j": "1"})
    assert len(outer.memory_expressions) == 3 and len(inner.memory_expressions) == 2


# ------------------------------------------------------------- thread space from guards
@pytest.mark.parametrize("guard, expected", [
    ("if (i < n) A[i] = 0.0f;", ("n", "1")),
    ("if (n > i) A[i] = 0.0f;", ("n", "1")),
    ("if (i >= n) return;\nA[i] = 0.0f;", ("n", "1")),
    ("if (i >= n) { return; }\nA[i] = 0.0f;", ("n", "1")),
    ("if (n <= i) return;\nA[i] = 0.0f;", ("n", "1")),
])
def test_thread_space_from_1d_guard(guard, expected):
    proc = kernel("__global__ void k(float *A, int n) {\n"
                  f"int i = blockIdx.x * blockDim.x + threadIdx.x;\n{guard} }}")
    assert proc.pragma.global_dim == expected
    assert proc.pragma.global_dim_source == "guard"


def test_inclusive_guard_adds_one():
    proc = kernel("__global__ void k(float *A, int n) {\n"
                  "int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                  "if (i <= n) A[i] = 0.0f; }")
    gx, gy = proc.pragma.global_dim
    assert sympy.simplify(sym(gx) - sym("n + 1")) == 0 and gy == "1"


def test_thread_space_from_2d_guard():
    proc = kernel("__global__ void k(float *A, int W, int H) {\n" + IDS_2D +
                  "if (x < W && y < H) A[y * W + x] = 0.0f; }")
    assert proc.pragma.global_dim == ("W", "H")
    assert proc.pragma.global_dim_source == "guard"


def test_thread_space_from_negated_2d_guard():
    proc = kernel("__global__ void k(float *A, int W, int H) {\n" + IDS_2D +
                  "if (x >= W || y >= H) return;\nA[y * W + x] = 0.0f; }")
    assert proc.pragma.global_dim == ("W", "H")


def test_no_guard_no_thread_space():
    proc = kernel("__global__ void k(float *A) {\n"
                  "int i = blockIdx.x * blockDim.x + threadIdx.x;\nA[i] = 0.0f; }")
    assert proc.pragma.global_dim == (None, None)
    assert proc.pragma.global_dim_source == ""


def test_guard_on_reassigned_local_is_ignored():
    proc = kernel("__global__ void k(float *A, int n) {\n"
                  "int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                  "i = i * 2;\n"
                  "if (i < n) A[i] = 0.0f; }")
    assert proc.pragma.global_dim == (None, None)


def test_thread_space_from_config_macros():
    proc = kernel("#define globalDimX 1024\n#define globalDimY 1\n#define blockDimX 128\n"
                  "__global__ void k(float *A) { A[idx] = 0.0f; }")
    assert proc.pragma.global_dim == ("1024", "1")
    assert proc.pragma.global_dim_source == "define"
    assert proc.pragma.block_dim[0] == "128"


def test_predefined_names_avoid_clashes():
    proc = kernel("__global__ void k(float *A, int n) {\n"
                  "int idx = threadIdx.x + blockIdx.x * blockDim.x;\n"
                  "int tidx = 3;\n"
                  "if (idx < n) A[idx] = tidx + threadIdx.x; }")
    assert proc.predefined_names == {"idx": "idx_1", "tidx": "tidx_1"}
    assert proc.pragma.global_dim == ("n", "1")


# ------------------------------------------------------------------------ known bugs
def test_reassigned_scalar_parameter_is_not_uniform():
    proc = kernel("__global__ void k(float *A, int n) {\n"
                  "n = n + threadIdx.x;\n  A[n] = 1.0f; }")
    d = only(proc, "A").decomposition
    # n now differs between threads: the index must not be a thread-invariant constant
    assert d.unresolved or d.predefined, str(d)


def test_non_canonical_iterator_sharing_a_name_is_not_a_loop_symbol():
    proc = kernel("__global__ void k(float *A, int n) {\n"
                  "for (int i = 0; i < n; i++) A[i] = 0.0f;\n"
                  "for (int i = n - 1; i >= 0; i--) A[i + n] = 1.0f; }")
    first, second = proc.loops
    assert first.canonical and not second.canonical
    m = mems(proc, "A")[1]
    assert m.decomposition.loop == {}, str(m.decomposition)


@pytest.mark.parametrize("store", ["P[i].x += V[i].x", "P[i].w = 0.0f", "P[i].y++",
                                   "++P[i].z", "S[threadIdx.x].x = V[i].y"])
def test_a_store_to_a_vector_component_writes_and_reads_the_element(store):
    """``pos[i].x += ...`` was classified a read: verification then compared no such array
    (an n-body step's positions were never checked) and a pass could take it for read-only.
    Storing one component keeps the others: the element is read and written."""
    proc = kernel("__global__ void k(float4 *P, const float4 *V, int n) {\n"
                  "__shared__ float4 S[256];\n"
                  "int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                  f"if (i < n) {{ {store}; }}\n}}")
    name = "S" if store.startswith("S") else "P"
    (m,) = mems(proc, name)
    assert m.is_write and m.is_read
    assert all(not v.is_write for v in mems(proc, "V"))
