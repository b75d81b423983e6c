"""Differential fuzzing (naiveopt/fuzz): a seeded campaign of random naive kernels, each
optimized under random passes, targets and dialects and verified on PoCL against its input,
and the reproducers it writes for what it finds (lit tests; the reduced miscompiles and crashes
found so far are in tests/lit/fuzz/, run by tests/test_lit.py).

A longer campaign: ``python -m naiveopt.fuzz --cases 5000 --seed S`` (README, Testing).
"""
from __future__ import annotations

import os
import random
import re
import shutil
import subprocess

import pytest

import naiveopt
from naiveopt.fuzz.campaign import Outcome, campaign, reduce, reproducer, run_case
from naiveopt.fuzz.generate import (KernelGenerator, atomic_file, dynamic_shared_file,
                                    gather_file, generate_case, map_file, switch_file,
                                    transpose_file)
from naiveopt.passes.options import MEMORIES
from naiveopt.passes.pipeline import optimization_pass_names

from conftest import BIN_DIR, TESTS_DIR

LIT = os.path.join(BIN_DIR, "lit")

#: Cases the CI campaign runs, and its seed (fixed, so a failure reproduces exactly).
CI_CASES = int(os.environ.get("NAIVEOPT_FUZZ_CASES", "200"))
CI_SEED = int(os.environ.get("NAIVEOPT_FUZZ_SEED", "20261"))


@pytest.fixture(scope="module")
def passing_case():
    case = generate_case(5, 7, optimization_pass_names(), MEMORIES)
    assert run_case(case).kind == "passed"
    return case


def _lit(tmp_path, name: str, text: str) -> subprocess.CompletedProcess:
    """Run ``text`` as the one test of a lit suite configured as tests/lit."""
    suite = tmp_path / "suite"
    suite.mkdir(exist_ok=True)
    shutil.copy(os.path.join(TESTS_DIR, "lit", "lit.cfg.py"), suite / "lit.cfg.py")
    (suite / name).write_text(text, encoding="utf-8")
    return subprocess.run([LIT, "-v", "--param", f"exec_root={tmp_path / 'exec'}",
                           str(suite / name)], capture_output=True, text=True, timeout=300)


@pytest.mark.skipif(not os.path.exists(LIT), reason="lit not installed next to the interpreter")
@pytest.mark.parametrize("variant", ["verified", "without sizes", "rejected"])
def test_reproducer_is_a_lit_test_that_fails_while_the_case_does(tmp_path, passing_case,
                                                                 variant):
    """A reproducer runs the case's options through naiveopt under lit: a case that now
    passes passes (kernels verified, at inferred sizes where the pragma gives none), and one
    that still fails (here: naiveopt rejects it) fails."""
    source = passing_case.source
    if variant == "without sizes":
        source = re.sub(r"sizes\([^)]*\) ?", "", source, count=1)
    elif variant == "rejected":
        source += "this is not C\n"
    text = reproducer(passing_case, source, Outcome("miscompile", "found by the campaign"))
    assert re.search(r"^// RUN: %naiveopt %s --target \w+ --arch \w+ .*\| FileCheck %s$",
                     text, re.M), text
    done = _lit(tmp_path, passing_case.filename, text)
    assert (done.returncode == 0) == (variant != "rejected"), done.stdout + done.stderr


def test_generator_is_deterministic_and_varied():
    first = [generate_case(7, i, ["a", "b"], ("global",)) for i in range(30)]
    again = [generate_case(7, i, ["a", "b"], ("global",)) for i in range(30)]
    assert [c.source for c in first] == [c.source for c in again]
    assert len({c.source for c in first}) == 30
    assert {c.dialect for c in first} == {"cuda", "opencl"}
    assert {c.target for c in first} == {"cuda", "opencl"}
    assert {c.arch for c in first} == {"sm_90", "sm_80", "gfx90a"}
    text = "".join(c.source for c in first)
    for construct in ("for (", "if (", "return;", "#pragma naiveopt sizes(", "[j *", "+="):
        assert construct in text


def test_generator_reaches_arrays_through_local_pointers():
    """Some cases read or write an array through a local pointer (``P_at = P + 1``, ``P_at[e -
    1]``, ``*(P + e)``); the front end reads them back as the plain accesses, so the case's
    memory expressions are those of the kernel without pointers."""
    from naiveopt.frontend import parse_module

    pointered = [c for c in (generate_case(11, i, [], ("global",)) for i in range(120))
                 if "_at = " in c.source]
    assert len(pointered) >= 5
    text = "".join(c.source for c in pointered)
    assert "_at[(" in text and "*(" in text
    for case in pointered[:5]:
        module = parse_module(case.filename, case.source, {})
        code = str([p.func for p in module.procedures])
        assert "_at" not in code


def test_generator_reads_through_vector_accesses():
    """Some cases read an input array through a vector and take a component: OpenCL
    ``vload4(0, &P[e]).x`` / ``vload2(0, P + (e)).x`` (the pragma shape padded), CUDA
    ``reinterpret_cast<const float4 *>(&P[e])[0].x`` / ``->x`` / a C cast; the front end
    reads each as its element accesses, and the cases verify."""
    from naiveopt.frontend import parse_module

    found = [c for c in (generate_case(11, i, [], ("global",)) for i in range(200))
             if "vload" in c.source or "reinterpret_cast" in c.source or "4 *)(" in c.source]
    opencl = [c for c in found if c.dialect == "opencl"]
    cuda = [c for c in found if c.dialect == "cuda"]
    assert len(opencl) >= 3 and len(cuda) >= 3, (len(opencl), len(cuda))
    text = "".join(c.source for c in found)
    assert "vload4(0, &" in text and "vload2(0, " in text and ") + 4)" in text
    assert "reinterpret_cast<const " in text and "->x" in text
    from pycparser import c_ast

    from naiveopt.ir.rewrite import walk

    for case in opencl[:3] + cuda[:3]:
        module = parse_module(case.filename, case.source, {})
        code = str([p.func for p in module.procedures])
        pointer_casts = [n for p in module.procedures for n, _ in walk(p.body)
                         if isinstance(n, c_ast.Cast) and
                         isinstance(n.to_type.type, c_ast.PtrDecl)]
        assert "vload" not in code and not pointer_casts, case.source
    for case in opencl[:2] + cuda[:2]:
        outcome = run_case(case)
        assert outcome.kind == "passed", (outcome.kind, outcome.detail)


def test_generator_names_the_thread_position_as_an_int2(monkeypatch):
    """Some cases declare the two thread ids as one int2 (Udacity CS344's ``const int2 pos
    = make_int2(...)``, each use ``pos.x`` / ``pos.y``); the vector-locals canonicalization
    reads the components back as the ids, and the cases verify with their passes."""
    import naiveopt.fuzz.generate as generate

    monkeypatch.setattr(generate, "POSITION_SHARE", 1.0)
    found = [c for c in (generate_case(81, i, [], ("global",)) for i in range(40))
             if "int2 pos = " in c.source]
    assert {c.dialect for c in found} == {"cuda", "opencl"}, len(found)
    for case in found[:2]:
        result = naiveopt.optimize(case.source, filename=case.filename, target=case.target)
        assert any(r.pass_name == "vector-locals" and r.kind == "applied"
                   for r in result.remarks), case.source
        assert result.verified, [k.verification.detail for k in result.kernels]


def test_generator_reads_float3_arrays(monkeypatch):
    """Some cases read a float3 array's components (``V[e].y``; in CUDA some through a helper
    returning the whole vector). A CUDA case is verified with CUDA's 12-byte float3 in
    OpenCL (passes/functional/vector3_layout.py): the helper's parameter packed in the naive
    kernel, inlined in the output; the cases verify."""
    import naiveopt.fuzz.generate as generate

    monkeypatch.setattr(generate, "VECTOR3_SHARE", 1.0)
    found = [c for c in (generate_case(91, i, [], ("global",)) for i in range(40))
             if "const float3 *V" in c.source]
    assert {c.dialect for c in found} == {"cuda", "opencl"}, len(found)
    helper = [c for c in found if "fz_load3(V, " in c.source]
    assert helper and all(c.dialect == "cuda" for c in helper)
    for case in [helper[-1]] + [c for c in found if c.dialect == "opencl"][:1]:
        result = naiveopt.optimize(case.source, filename=case.filename, target=case.target)
        assert result.verified, [k.verification.detail for k in result.kernels]
    cuda = naiveopt.optimize(helper[-1].source, filename=helper[-1].filename, target="opencl",
                             verify=False).code
    assert "float3 *" not in cuda and "vload3(" in cuda, cuda


def test_generator_writes_reference_helpers_and_launch_bounds(monkeypatch):
    """CUDA cases that accumulate through ``fz_add_to(acc, e)`` (a reference to a local)
    and store through ``fz_set(B[e], acc)`` (a reference to a global element, compared as a
    write), and that declare ``__launch_bounds__`` before the head or after ``void``; they
    verify."""
    import naiveopt.fuzz.generate as generate

    monkeypatch.setattr(generate, "REFERENCE_SHARE", 1.0)
    monkeypatch.setattr(generate, "BOUNDS_SHARE", 1.0)
    cases = [generate_case(93, i, [], ("global",)) for i in range(60)]
    stores = [c for c in cases if "fz_set(" in c.source]
    assert stores and [c for c in cases if "fz_add_to(acc, " in c.source]
    bounds = [c for c in cases if "__launch_bounds__(" in c.source]
    assert any(re.search(r"^__launch_bounds__\(\d+\)$", c.source, re.M) for c in bounds)
    assert any(re.search(r"^__global__ void __launch_bounds__\(\d+\) ", c.source, re.M)
               for c in bounds)
    for case in stores[:2]:
        outcome = run_case(case)
        assert outcome.kind == "passed", (outcome.kind, outcome.detail)


def test_generator_ends_early_return_kernels_in_a_test_with_an_else(monkeypatch):
    """Some kernels that return early past their bound end in ``if (i + 1 < N) B[i] = ...;
    else B[i] = 0.0f;`` (finite-difference code's boundary): no guard of the thread space
    (analysis/guards.thread_guards, which read such an if as one once); the cases verify and
    their thread space is the early return's."""
    import naiveopt.fuzz.generate as generate

    monkeypatch.setattr(generate, "INTERIOR_ELSE_SHARE", 1.0)
    form = re.compile(r"\n    if \((\w+) (\+ 1 < \w+|< \w+ - [12]|> 0 && .*)\)\n        \w+\[\1\] "
                      r"\+?= [^;]+;\n    else\n        \w+\[\1\] \+?= 0(\.0f)?;\n\}")
    found = [c for c in (generate_case(41, i, [], ("global",)) for i in range(80))
             if form.search(c.source)]
    assert {c.dialect for c in found} == {"cuda", "opencl"}, len(found)
    for case in [next(c for c in found if c.dialect == d) for d in ("cuda", "opencl")]:
        outcome = run_case(case)
        assert outcome.kind == "passed", (outcome.kind, outcome.detail, case.source)
        assert not any("thread space from bounds guard: (N - " in r for r in outcome.remarks)


def test_generator_writes_solver_steps_without_annotations():
    """LU elimination steps (``i > k && j > k``) and red-black sweeps (``(i + j) % 2 ==
    color``) with no pragma: inference gives the step and the colour values at which
    threads work, and the cases verify."""
    import random

    from naiveopt.fuzz.campaign import cases
    from naiveopt.fuzz.generate import step_file

    sources = [(step_file(random.Random(seed), d), d) for seed in range(8)
               for d in ("cuda", "opencl")]
    assert any("lu_step(" in s for s, _ in sources) and any("rb_sweep(" in s for s, _ in sources)
    drawn = [c for c in cases(19, 400) if "lu_step(" in c.source or "rb_sweep(" in c.source]
    assert drawn and not any("#pragma naiveopt" in c.source for c in drawn)
    for case in [next(c for c in drawn if "lu_step(" in c.source),
                 next(c for c in drawn if "rb_sweep(" in c.source)]:
        outcome = run_case(case)
        assert outcome.kind == "passed", (outcome.kind, outcome.detail, case.source)


def test_generator_writes_strided_padded_convolutions_without_annotations():
    """1-D convolutions over a flattened (batch,) channel, position output with a stride,
    padding and dilation: no pragma, and the cases verify (the window's sizes small)."""
    import random

    from naiveopt.fuzz.campaign import cases
    from naiveopt.fuzz.generate import window_file

    sources = [window_file(random.Random(seed), "cuda") for seed in range(8)]
    assert any("N * C * LO" in s for s in sources) and any("k * dilation" in s for s in sources)
    drawn = [c for c in cases(23, 300) if "conv1d(" in c.source]
    assert drawn
    outcome = run_case(drawn[0])
    assert outcome.kind == "passed", (outcome.kind, outcome.detail, drawn[0].source)


def test_generator_writes_24_bit_multiplies(monkeypatch):
    """Some int-indexed cases write row-major indices with mad24 (OpenCL) or __mul24 (CUDA);
    the analyses read them as products, and the cases verify."""
    import naiveopt.fuzz.generate as generate

    monkeypatch.setattr(generate, "MAD24_SHARE", 1.0)
    found = [c for c in (generate_case(97, i, [], ("global",)) for i in range(30))
             if "mad24(" in c.source or "__mul24(" in c.source]
    assert {c.dialect for c in found} == {"cuda", "opencl"}, len(found)
    for case in [c for c in found if c.dialect == "opencl"][:1] + \
            [c for c in found if c.dialect == "cuda"][:1]:
        outcome = run_case(case)
        assert outcome.kind == "passed", (outcome.kind, outcome.detail)


def test_generator_passes_scalars_in_a_struct(monkeypatch):
    """Some single-kernel cases take their scalar parameters in one struct passed by value
    (``typedef struct {...} Params;`` / ``struct Params``), read as ``prm.N`` in the body and
    the pragma; the front end reads the members as sizes, and the cases verify."""
    import naiveopt.fuzz.generate as generate

    monkeypatch.setattr(generate, "STRUCT_SHARE", 1.0)
    found = [c for c in (generate_case(101, i, [], ("global",)) for i in range(30))
             if re.search(r"^(typedef )?struct ", c.source, re.M)]
    assert {c.dialect for c in found} == {"cuda", "opencl"}, len(found)
    assert any("#pragma naiveopt sizes(" in c.source and "." in c.source.split("sizes(")[1]
               .split(")")[0] for c in found)
    assert any(re.search(r"^struct \w+ \{", c.source, re.M) for c in found)
    for case in [c for c in found if c.dialect == "opencl"][:1] + \
            [c for c in found if c.dialect == "cuda"][:1]:
        outcome = run_case(case)
        assert outcome.kind == "passed", (outcome.kind, outcome.detail)
        assert any("struct-params" in r for r in outcome.remarks), outcome.remarks


def test_generator_reads_an_input_as_an_array_of_structs(monkeypatch):
    """Some single-kernel cases read a float input through two-float structs (``const Pair
    *X``, ``X[e].v``): the front end reads the floats they hold, the output keeps the
    struct pointer, and the cases verify."""
    import naiveopt.fuzz.generate as generate

    monkeypatch.setattr(generate, "AOS_SHARE", 1.0)
    found = [c for c in (generate_case(104, i, [], ("global",)) for i in range(40))
             if "float v; float w;" in c.source]
    assert {c.dialect for c in found} == {"cuda", "opencl"}, len(found)
    assert all(re.search(r"\]\.[vw]\b|\)->[vw]\b", c.source) for c in found)
    for case in [c for c in found if c.dialect == "opencl"][:1] + \
            [c for c in found if c.dialect == "cuda"][:1]:
        outcome = run_case(case)
        assert outcome.kind == "passed", (outcome.kind, outcome.detail)
        assert any("read member by member" in r for r in outcome.remarks), outcome.remarks


def test_generator_writes_typedefs_and_unsigned_thread_ids():
    """PolyBench's typedef'd element type (arrays, scalars, locals, a pointer typedef in
    CUDA) and size_t/unsigned thread ids, in both dialects."""
    cases = [generate_case(11, i, ["a"], ("global",)) for i in range(120)]
    typedef = [c for c in cases if re.search(r"^typedef (float|double|unsigned) (\w+);$",
                                             c.source, re.M)]
    assert {c.dialect for c in typedef} == {"cuda", "opencl"}
    for c in typedef:
        name = re.search(r"^typedef \w+ (\w+);$", c.source, re.M).group(1)
        assert re.search(rf"\b{name} acc\b|\b{name} \*", c.source), c.source
    assert any(re.search(r"^typedef \w+ \*\w+_PTR;$", c.source, re.M) for c in typedef)
    ids = [c for c in cases if re.search(r"^    (size_t|unsigned int|unsigned|uint) i = ",
                                         c.source, re.M)]
    assert {c.dialect for c in ids} == {"cuda", "opencl"}
    assert any("size_t i = " in c.source for c in ids)


#: The canonicalization passes' forms (naiveopt/passes/functional/canonicalize/) and how to
#: find each in a generated source.
CANONICAL_FORMS = {
    "C89 iterators declared at the top": r"^\s+int [klmn](, [klmn])*;$",
    "a loop over a C89 iterator": r"for \([klmn] = ",
    "++k": r"; \+\+[klmn]\)",
    "k += 1": r"([klmn]) \+= 1\)",
    "k = k + 1": r"([klmn]) = \1 \+ 1\)",
    "k = 1 + k": r"([klmn]) = 1 \+ \1\)",
    "a <= bound": r"[klmn] <= \w+ - 1;",
    "a while loop with a counter": r"while \([klmn] <",
    "an iterator read after its loop": r"\+= \((float|double|unsigned)\)[klmn];",
    "early returns one per id": r"\(\w+ (>=|<=) \w+\)\n\s+return;\n\s+if \(",
    "nested guards": r"if \(i < \w+\) \{\n\s+if \(j < \w+\) \{",
    "ids built from locals": r"int t[xy] = (threadIdx|get_local_id)",
    "an id through a cast": r"\(unsigned\)blockIdx",
    "an id assigned after its declaration": r"int i;\n\s+i = ",
    "a grid-stride loop": r"i (\+=|= i \+) (blockDim.x \* gridDim.x|gridDim.x \* blockDim.x|"
                          r"get_global_size\(0\)|get_num_groups\(0\) \* get_local_size\(0\)|"
                          r"stride)\)",
    "per-thread partial sums over a grid stride": r"P\[tid\] = s;",
    "a read through a helper": r"load\(x, ",
    "an id through a helper": r"= global_x\(\);",
    "a loop with an empty init": r"for \(; i < N; ",
    "a clamp written as if-statements": r"if \([^)]*tap\d+[^)]*\) \{? ?tap\d+ = ",
    "a loop bound clamped with min": r"[klmn] < min\([A-Z]\w*, \d+\)",
    "a struct element read through a pointer and ->": r"\)->[vw]\b",
    "a dereference of a chain of pointer offsets": r"\*\(\w+ \+ \(.*\) - 1 \+ 1\)",
    "a store to a component of a vector element": r"\b[QRSTUVW]\[[^\]]+\]\.[xyzw](\+\+| \+?= )",
    "complex numbers through cuComplex.h": r"cuC\w+f\(\w",
    "a sine and cosine through sincosf": r"sincosf\(\w",
    "an array parameter of rows of a fixed width": r"\(\*[A-Z]\)\[\d+\]|[A-Z]\[\]\[\d+\]",
    "an integer size the host sets in constant memory": r"^__constant__ int \w+;$",
    "a size in a struct the host sets in constant memory": r"__constant__ fz_params_t fz_prm;",
    "a pointer declared first and set by a statement": r"\*\w+_at;\n\s+\w+_at = \w+ \+ 1;",
    "a pointer set to an array and moved by the next statement": r"_at = \w+;\n\s+\w+_at \+= 1;",
    "a constant through sizeof": r"sizeof\((float|short)\)",
    "a clamp against an unsigned size through a cast": r"tap\d+ >?=? ?\(int\)[A-Z]|"
                                                        r"\(int\)[A-Z]\w* <= tap",
}
#: Forms only CUDA is written in.
CUDA_ONLY = {"an id through a cast", "an id through a helper",
             "an integer size the host sets in constant memory",
             "a size in a struct the host sets in constant memory",
             "an array parameter of rows of a fixed width",
             "a sine and cosine through sincosf", "complex numbers through cuComplex.h"}


def test_generator_writes_kernels_as_others_write_them():
    """Each canonical form is generated, in both dialects, within the first cases of a
    campaign (so a campaign exercises every canonicalization pass)."""
    sources = [generate_case(11, i, [], ("global",)) for i in range(400)]
    for dialect in ("cuda", "opencl"):
        text = "\n".join(c.source for c in sources if c.dialect == dialect)
        missing = [name for name, form in CANONICAL_FORMS.items()
                   if dialect == "cuda" or name not in CUDA_ONLY
                   if not re.search(form, text, re.M)]
        assert not missing, f"{dialect}: never generated: {missing}"


_CLAMP = re.compile(r"min\(max\(|max\(min\(|max\(0, min\(|clamp\(|\bmax\(\w+ - \d, 0\)|"
                    r"\bmin\(\w+ \+ \d, \w+ - 1\)")


def test_generator_writes_clamped_stencils():
    """Some cases clamp indices at the border as image filters do (min(max(...)), swapped,
    OpenCL's clamp, one-sided, ternaries; inline or through an int local), some sum a clamped
    neighbourhood, and the stencil pass stages one such neighbourhood, verified; the plain
    generator (no taps stream) writes none."""
    cases = [generate_case(11, i, [], ("global",)) for i in range(60)]
    clamped = [c for c in cases if _CLAMP.search(c.source)]
    assert len(clamped) >= 10
    text = "".join(c.source for c in clamped)
    for form in ("int tap", "min(max(", "max(min(", "max(0, min(", "clamp(", " ? "):
        assert form in text, form
    plain = "".join(KernelGenerator(random.Random(seed), "opencl").file() for seed in range(20))
    assert not _CLAMP.search(plain) and "tap" not in plain
    for case in clamped[:8]:
        outcome = run_case(case)
        assert outcome.kind == "passed", (outcome.kind, outcome.detail)
        staged = [r for r in outcome.remarks if "[stencil] applied" in r and "clamp(" in r]
        if staged:
            break
    else:
        raise AssertionError("no clamped neighbourhood staged among the first cases")


def test_generator_writes_coarsened_kernels():
    """Some cases are kernels whose threads each cover several rows (the NVIDIA blog's
    form: rows y + j, j stepping by ROWS through TILE_Y), in several spellings; they verify
    under the launch the predefined pass reads from the loop (ROWS-row blocks)."""
    cases = [c for c in (generate_case(7, i, [], ("global",)) for i in range(120))
             if "ROWS" in c.source]
    assert len(cases) >= 4
    text = "".join(c.source for c in cases)
    for form in ("j += ROWS", "j = j + ROWS", "TILE_X", "x * H + ", "(y + j)"):
        assert form in text, form
    for case in cases[:3]:
        outcome = run_case(case)
        assert outcome.kind == "passed", (outcome.kind, outcome.detail)
        assert any("each covering" in r and "[predefined] analysis" in r
                   for r in outcome.remarks), outcome.remarks


def test_generator_writes_atomic_updates():
    """Some cases update elements atomically (histograms, totals, maxima, row and column
    sums, a __shared__ block total) through each address form, in both dialects; they are
    verified, and no optimization pass changes them (ir/atomics.py)."""
    cases = [c for c in (generate_case(7, i, [], ("global",)) for i in range(200))
             if re.search(r"\batomic|\batom_", c.source)]
    assert len(cases) >= 5 and {c.dialect for c in cases} == {"cuda", "opencl"}
    big = "".join(atomic_file(random.Random(seed), dialect)
                  for seed in range(40) for dialect in ("cuda", "opencl"))
    for form in ("atomicAdd(&", "atomicAdd(out, ", " + (v[i] & 63)", "atomic_inc(", "atom_add(",
                 "atomicMax(", "__shared__ float block_total", "__local int block_total",
                 "array(y, W)", "array(y, H)"):
        assert form in big, form
    for case in cases[:3]:
        outcome = run_case(case)
        assert outcome.kind == "passed", (outcome.kind, outcome.detail)
        assert not any("] applied" in r for r in outcome.remarks), outcome.remarks


def test_generator_writes_reads_through_index_arrays():
    """Some cases read through an index array (a gather, an embedding row, CSR and ELL
    products), with their pragma or without it, where the extents are inferred over index
    values in [0, FREE_VALUES); those cases verify (verify/extents.py)."""
    cases = [c for c in (generate_case(7, i, [], ("global",)) for i in range(200))
             if re.search(r"rowptr|tok\[i\]|x\[cols\[|idx\[i\]", c.source)]
    assert len(cases) >= 4 and {"#pragma" in c.source for c in cases} == {True, False}
    big = "".join(gather_file(random.Random(seed), dialect)
                  for seed in range(40) for dialect in ("cuda", "opencl"))
    for form in ("int k = idx[i];", "x[(int)idx[i]]", "table[tok[i] * D + j]", "int j;",
                 "for (int j = start; j < end; ++j)", "x[col[j]]", "x[cols[R * n + r]]"):
        assert form in big, form
    for case in [c for c in cases if "#pragma" not in c.source][:2]:
        outcome = run_case(case)
        assert outcome.kind == "passed", (outcome.kind, outcome.detail)


def test_generator_writes_dynamic_shared_memory():
    """Some cases keep a block's values in shared memory the launch sizes (CUDA's extern
    __shared__, OpenCL's __local parameter anywhere in the list): tree sums halving or
    doubling their stride, block reversal, neighbour sums; they verify, with the local
    memory sized from the accesses, and no optimization pass changes them."""
    cases = [c for c in (generate_case(7, i, [], ("global",)) for i in range(300))
             if re.search(r"extern __shared__|__local \w+ \*", c.source)]
    assert len(cases) >= 4 and {c.dialect for c in cases} == {"cuda", "opencl"}
    big = "".join(dynamic_shared_file(random.Random(seed), dialect)
                  for seed in range(40) for dialect in ("cuda", "opencl"))
    for form in ("extern __shared__ float", "extern __shared__ int", "s >>= 1", "s /= 2",
                 "s *= 2", "[get_local_size(0) - 1 - t]", "(__local float *", ", __local",
                 "(t + 1) % blockDim.x]"):
        assert form in big, form
    for case in cases[:2]:
        outcome = run_case(case)
        assert outcome.kind in ("passed", "skipped"), (outcome.kind, outcome.detail)
        assert not any("] applied" in r for r in outcome.remarks), outcome.remarks


def test_generator_writes_kernel_templates():
    """Some CUDA cases write their first kernel as a template over its element type with
    explicit instantiations (frontend/templates.py reads each as a kernel of its own); they
    verify."""
    cases = [c for c in (generate_case(7, i, [], ("global",)) for i in range(300))
             if "template <typename T>\n__global__" in c.source]
    assert len(cases) >= 2, len(cases)
    assert all("template __global__ void k0<float>(" in c.source for c in cases)
    outcome = run_case(cases[0])
    assert outcome.kind == "passed", (outcome.kind, outcome.detail)


def test_generator_writes_block_size_templates(monkeypatch):
    """Some templated cases are templates over the block constants their ids use (the CUDA
    samples' ``template <int BLOCK_SIZE>``), instantiated explicitly or launched by a host
    function with a block read from a variable; naiveopt takes the instance's argument as its
    block, and they verify."""
    import naiveopt.fuzz.generate as generate

    monkeypatch.setattr(generate, "TEMPLATE_SHARE", 1.0)
    cases = [c for c in (generate_case(1141, i, [], ("global",)) for i in range(120))
             if "template <int TB_X" in c.source]
    assert len(cases) >= 2, len(cases)
    assert any("<<<grid, threads>>>" in c.source for c in cases)
    assert all("blockIdx.x * TB_X" in c.source or "TB_X * blockIdx.x" in c.source
               for c in cases)
    hosted = next(c for c in cases if "<<<grid, threads>>>" in c.source)
    outcome = run_case(hosted)
    assert outcome.kind == "passed", (outcome.kind, outcome.detail)
    assert any("the argument of the template instance k0<" in r for r in outcome.remarks)


def test_generator_writes_switches():
    """Some cases branch by a switch (grouped labels, the default anywhere, braced cases, a
    case that returns, a last case without break), in both dialects; they verify, the
    OpenCL ones against the switch itself (the naive program is the input)."""
    cases = [c for c in (generate_case(7, i, [], ("global",)) for i in range(200))
             if "switch (" in c.source]
    assert len(cases) >= 3
    big = "".join(switch_file(random.Random(seed), dialect)
                  for seed in range(40) for dialect in ("cuda", "opencl"))
    for form in ("case 1:\n        case 2:", "switch (m)", "switch (k[i] & 3)",
                 "switch ((int)(x[i] * 4.0f) & 3)", "        {\n", "return;"):
        assert form in big, form
    opencl = [c for c in cases if c.dialect == "opencl"] or cases
    outcome = run_case(opencl[0])
    assert outcome.kind == "passed", (outcome.kind, outcome.detail)


def test_generator_writes_named_constants():
    """Some CUDA cases declare their block and table sizes as named constants (``const int``,
    ``static const int``, ``constexpr int``) that the kernels read, some #define lines carry a
    trailing comment, and some thread ids are converted by static_cast; those cases verify
    (frontend/named_constants.py, translate.py)."""
    cases = [generate_case(7, i, [], ("global",)) for i in range(300)]
    named = [c for c in cases if re.search(
        r"^(?:static )?(?:const|constexpr) int (\w+) = \d+;", c.source, re.M)]
    assert len(named) >= 3
    text = "".join(c.source for c in named)
    for form in ("static const int", "constexpr int"):
        assert form in text, form
    assert any(re.search(r"^#define \w+ \d+ +(//|/\*)", c.source, re.M) for c in cases)
    casts = [c for c in cases if "static_cast<int>(" in c.source]
    assert casts and any(re.search(r"float \w+\{0\.0f\};", c.source) for c in casts)
    named.append(casts[0])
    for case in named[:2] + named[-1:]:
        outcome = run_case(case)
        assert outcome.kind == "passed", (outcome.kind, outcome.detail)


def test_generated_writes_use_own_thread_ids():
    """Race freedom by construction: a written array's thread dimensions are indexed by the
    thread ids alone."""
    for seed in range(40):
        gen = KernelGenerator(random.Random(seed), "cuda")
        gen.file()
        for array in gen.arrays.values():
            if array.written:
                assert {d.owner for d in array.dims} >= {"i"}
            else:
                assert all(d.owner is None for d in array.dims)


def test_generator_writes_ids_indexed_by_a_block_constant():
    """``blockIdx.x * BLOCK_X + threadIdx.x`` (OpenCL: get_group_id/get_local_id), BLOCK_X
    #defined as the case's naive block, the block the pragma gives where it gives one."""
    seen = set()
    for index in range(60):
        source = generate_case(7, index, [], MEMORIES).source
        for axis, value in re.findall(r"^#define BLOCK_([XY]) (\d+)$", source, re.M):
            seen.add(axis)
            assert re.search(rf"(blockIdx\.{axis.lower()}|get_group_id\(\d\)|\bb{axis.lower()}) "
                             rf"\* BLOCK_{axis}|BLOCK_{axis} \* ", source), source
            block = re.search(r"block\((\d+)(?:, (\d+))?", source)
            if block:
                assert block.group(1 if axis == "X" else 2) in (value, None), source
    assert seen >= {"X", "Y"}


def test_reduce_keeps_what_the_failure_needs():
    case = generate_case(3, 0, [], ("global",))
    lines = case.source.splitlines()
    keep = next(line for line in lines if "acc" in line and "=" in line).strip()
    reduced = reduce(case, None, lambda text: keep in text)
    assert keep in reduced
    assert len(reduced.splitlines()) < len(lines)
    assert reduced.count("{") == reduced.count("}")


#: The campaign is split into chunks so that pytest-xdist spreads it over the CI's cores.
CHUNKS = 4


@pytest.mark.fuzz
@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_fuzz_campaign(chunk):
    """The seeded CI campaign: no miscompile, no crash; nearly every case verifies (so the
    generator stays inside the supported subset) and the optimization passes fire."""
    count = -(-CI_CASES // CHUNKS)
    report = campaign(CI_SEED, count, start=chunk * count)
    failures = "\n\n".join(f"case {c.index}: {c.command()}\n{o.kind}: {o.detail}\n{c.source}"
                           for c, o in report.failures)
    assert not report.failures, f"{report.summary()}\n{failures}"
    assert report.counts["passed"] >= 0.9 * count, report.summary()
    assert sum(report.applied.values()) >= 0.3 * count, report.summary()


def test_most_guarded_cases_carry_no_annotations_and_still_verify():
    """The fuzzer drops the pragma line of most cases whose kernels bound their own thread
    space: naiveopt infers what verification needs (verify/infer.py) and must verify them."""
    from naiveopt.fuzz.campaign import cases, run_case

    drawn = list(cases(97, 60))
    bare = [c for c in drawn if "#pragma naiveopt" not in c.source]
    assert len(bare) >= len(drawn) // 3, len(bare)
    outcomes = [run_case(c) for c in bare[:6]]
    assert all(o.kind in ("passed", "rejected") for o in outcomes), \
        [(o.kind, o.detail) for o in outcomes]
    assert sum(o.kind == "passed" for o in outcomes) >= 4


def test_an_output_that_does_not_build_is_a_crash_not_a_rejection(monkeypatch):
    """The front end accepted the case, so an OpenCL build failure during verification is
    naiveopt's (fuzz seed 20271125 cases 261, 299 were counted as generator gaps)."""
    import naiveopt.fuzz.campaign as campaign_module
    from naiveopt.errors import NaiveoptError

    case = generate_case(5, 0, optimization_pass_names(), MEMORIES)

    def broken(*args, **kw):
        raise NaiveoptError("OpenCL build failed during verification:\ncall to '_cl_fmax' "
                            "is ambiguous")

    monkeypatch.setattr(campaign_module, "optimize", broken)
    assert run_case(case).kind == "crash"
    monkeypatch.setattr(campaign_module, "optimize", lambda *a, **k: (_ for _ in ()).throw(
        NaiveoptError("k.cu:3:1: error: templates are not supported")))
    assert run_case(case).kind == "rejected"


def test_host_code_cases_are_generated_and_their_launches_checked():
    """A share of CUDA cases carries host code launching its kernels; the campaign checks
    that a kernel whose launch changed is not launched the naive way in the output, and the
    check fails on an output that left such a launch (a mutation of a real one)."""
    from types import SimpleNamespace

    from naiveopt.api import optimize
    from naiveopt.fuzz.campaign import host_launch_contract

    drawn = [c for c in cases(777, 400) if "run_k" in c.source and c.target == "cuda"]
    assert len(drawn) >= 10
    rewritten = 0
    for case in drawn[:12]:
        result = optimize(case.source, filename=case.filename, target=case.target,
                          arch=case.arch, options=case.options, verify=False)
        assert host_launch_contract(result) == "", case.index
        if "_launch_from(" in result.code:
            rewritten += 1
            stale = re.sub(r"\b(k\d+)_launch_from\(((?:dim3\([^)]*\)|\w+), (?:dim3\([^)]*\)|\w+)), ",
                           r"\1<<<\2>>>(", result.code)
            assert "the host code launches it the naive way" in host_launch_contract(
                SimpleNamespace(code=stale, target="cuda", kernels=result.kernels))
    assert rewritten >= 1


from naiveopt.fuzz.campaign import cases  # noqa: E402


def test_array_names_do_not_run_out():
    """Two kernels of many arrays used up the 18 letters (seed 20271126, case 394 crashed the
    generator): names go on with a digit."""
    from naiveopt.fuzz.generate import ARRAY_NAMES, array_name

    assert [array_name(i) for i in range(3)] == ["A", "B", "C"]
    assert array_name(len(ARRAY_NAMES)) == "A2" and array_name(2 * len(ARRAY_NAMES) + 1) == "B3"


def test_reduction_cases_give_their_sizes_and_get_split():
    """A share of cases is a row or column reduction with few outputs and long loops, its
    sizes given with -D (also when the pragma is dropped) so that split-reduction's cost model
    decides; the pass fires on some of them, and they verify."""
    import naiveopt
    drawn = [c for c in cases(20271126, 400) if "void red(" in c.source]
    assert len(drawn) >= 20, len(drawn)
    assert all(set(c.defines) == {"N", "M"} for c in drawn)
    split = 0
    for c in drawn[:12]:
        result = naiveopt.optimize(c.source, filename=c.filename, target=c.target, arch=c.arch,
                                   options=c.options, defines=c.defines, verify=False)
        split += "split-reduction" in result.kernels[0].passes
    assert split >= 3, split


def test_streaming_cases_transpose_and_map_and_get_staged_or_vectorized():
    """Shares of the cases are transposed writes (coalesce-writes stages them, on 32x8
    threads of 4 tile rows where the model prefers it), some swapping x and y before the
    write, and elementwise maps (vectorize merges 4 lanes where the model estimates a gain on
    NVIDIA, always on AMD); they verify."""
    drawn = list(cases(20271127, 300))
    transposes = [c for c in drawn if "void t0(" in c.source]
    maps = [c for c in drawn if "void m0(" in c.source]
    assert len(transposes) >= 12 and len(maps) >= 12, (len(transposes), len(maps))
    assert any("return;" in c.source for c in transposes) and \
        any("if (x < W && y < H)" in c.source for c in transposes)
    swapped = next(src for seed in range(100)
                   if "x = y;" in (src := transpose_file(random.Random(seed), "cuda")))
    result = naiveopt.optimize(swapped, filename="t.cu")      # split-locals reads x_2, y_2
    assert result.verified and result.kernels[0].passes == ["coalesce-writes"], result.remarks
    assert any("unsigned int i" in c.source for c in maps) and \
        any("int j = " in c.source for c in maps)
    rows = staged = vectorized = passed = 0
    for c in transposes[:6] + maps[:6]:
        outcome = run_case(c)
        # skipped: an unannotated clamped index whose array extent inference cannot bound
        assert outcome.kind in ("passed", "skipped"), (outcome.kind, outcome.detail, c.source)
        passed += outcome.kind == "passed"
        text = "\n".join(outcome.remarks)
        staged += "[coalesce-writes] applied" in text
        rows += "rows per thread: block 32x" in text
        vectorized += "[vectorize] applied" in text
    assert passed >= 8 and staged >= 3 and rows >= 1 and vectorized >= 2, \
        (passed, staged, rows, vectorized)


def test_generator_leaves_threads_out_of_some_unguarded_pragmas(monkeypatch):
    """Unguarded kernels whose pragma gives sizes and shapes but no threads(...): the thread
    space is the width the written index implies or a free extent sized to the pragma's
    arrays (verify/infer.py); they verify."""
    found = []
    for seed in range(300):
        generator = KernelGenerator(random.Random(seed), "cuda", random.Random(f"{seed}:x"))
        generator.open_threads = random.Random(f"{seed}:open")
        source = generator.file()
        if not generator.guarded and "threads(" not in source:
            found.append(source)
    assert len(found) >= 2, len(found)
    for source in found[:2]:
        result = naiveopt.optimize(source, filename="k.cu")
        assert result.verified, [k.verification.detail for k in result.kernels]


def test_generator_writes_device_function_templates():
    """Some CUDA cases' helper is a __device__ function template, called with its argument
    explicit (``combine<float>(...)``) or deduced from casts; they verify."""
    cases = [c for c in (generate_case(1144, i, [], ("global",)) for i in range(300))
             if "__device__ T combine(T a, T b)" in c.source]
    assert len(cases) >= 2, len(cases)
    calls = "".join(c.source for c in cases)
    assert "combine<float>(" in calls or "combine((float)(" in calls
    outcome = run_case(cases[0])
    assert outcome.kind == "passed", (outcome.kind, outcome.detail)


def test_atomic_histograms_choose_bins_by_branches():
    """Some atomic histograms choose the bin by an if chain or a switch of constants, with
    no array(bins, ...) in the pragma: the extent is the constants' range, and they verify."""
    found = {}
    for seed in range(400):
        for dialect in ("cuda", "opencl"):
            source = atomic_file(random.Random(seed), dialect)
            if "int b;" in source or "int b = 0;" in source:
                found.setdefault((dialect, "switch" in source), source)
    assert {form for _, form in found} == {True, False}, list(found)
    for (dialect, _), source in found.items():
        result = naiveopt.optimize(source, filename="a.cu" if dialect == "cuda" else "a.cl")
        assert result.verified, [k.verification.detail for k in result.kernels]
        (k,) = result.kernels
        assert set(k.verification.facts["arrays"]["bins"]["elements"].values()) <= {4, 6}


def test_a_cuda_output_that_does_not_compile_is_a_bug():
    """The campaign compiles each kernel's CUDA form (the resource query): a CUDA output on
    an NVIDIA arch whose kernel NVRTC or nvcc rejects is a bug of naiveopt's; one that
    compiles, an OpenCL output, or an AMD arch are not judged so."""
    from types import SimpleNamespace

    from naiveopt.fuzz.campaign import cuda_compiles
    from naiveopt.fuzz.generate import Case
    from naiveopt.passes.manager import Remark
    from naiveopt.passes.options import PipelineOptions

    source = """\
__kernel void k(__global const float4 *x, __global float4 *y, int n)
{
    int i = get_global_id(0);
    if (i < n)
        y[i] = mad(x[i], x[i], y[i]);
}
"""
    result = naiveopt.optimize(source, filename="k.cl", target="cuda", verify=False)
    case = Case(0, 0, source, "opencl", "cuda", "sm_90", PipelineOptions(), {})
    assert cuda_compiles(result, case) == ""          # vector mad: fma overloads come along
    rejected = SimpleNamespace(remarks=[Remark(
        "missed", "nvcc", "k", "resource query skipped: NVRTC failed: kernel.cu(5): error: "
        "no instance of overloaded function \"fma\" matches the argument list")])
    assert cuda_compiles(rejected, case).startswith(
        "the CUDA output does not compile: resource query skipped: NVRTC failed")
    for target, arch in (("opencl", "sm_90"), ("cuda", "gfx90a")):
        other = Case(0, 0, source, "opencl", target, arch, PipelineOptions(), {})
        assert cuda_compiles(rejected, other) == ""


def test_a_case_whose_inferred_sizes_left_its_arrays_verifies():
    """Fuzz 20261 case 140 (an unguarded case without threads(...) that also lost its sizes):
    the inferred thread space was wider than the N rows its pragma gives D, so the naive
    kernel wrote past D. The run crashed PoCL and counted as a miscompile; verification
    then said which access leaves which array and ran nothing (test_naive_races holds that
    now). Inference now reads N in ``A[N - 1 - i]`` as bounding the thread space, so the
    sizes it picks keep the kernel inside its arrays, and the case verifies."""
    from naiveopt.fuzz.campaign import cases, run_case

    (case,) = cases(20261, 1, 140)
    outcome = run_case(case)
    assert outcome.kind == "passed", (outcome.kind, outcome.detail)


def test_a_case_reading_past_its_local_table_is_no_bug():
    """Fuzz 20261 case 37: a file-scope table moved into the kernel, read past its end at
    the inferred odd sizes; the garbage read there differed between the naive and the
    output's runs, a false miscompile. Verification bounds the sizes by a table the kernel
    declares too (check._past_tables): the case was skipped at the inferred sizes, and now
    inference cuts them to keep the table in bounds (infer._within_tables), so it verifies."""
    from naiveopt.fuzz.campaign import cases, run_case

    (case,) = cases(20261, 1, 37)
    assert "const float CT[" in case.source
    outcome = run_case(case)
    assert outcome.kind == "passed", (outcome.kind, outcome.detail)
    result = naiveopt.optimize(case.source, filename=case.filename, target=case.target,
                               arch=case.arch, options=case.options)
    (k,) = result.kernels
    assert k.verification.status == "passed", k.verification.detail
    # CT[j] with j over the thread space: N cut to CT's 33 entries, K left as inferred
    assert k.verification.detail.startswith("inferred (N=33, K=96)"), k.verification.detail


def test_generator_reads_maps_through_helpers_that_assign_their_parameter():
    """Some maps read their clamped neighbour through ``clamp_hi``, now and then written as
    tutorials write it, assigning its parameter (``if (v > n - 1) v = n - 1; return v;``):
    inline-helpers writes it out and the case verifies, in both dialects."""
    found = {}
    for seed in range(400):
        for dialect in ("cuda", "opencl"):
            source = map_file(random.Random(seed), dialect)
            if "        v = n - 1;" in source and "clamp_hi(i + 1, N)" in source:
                found.setdefault(dialect, source)
    assert set(found) == {"cuda", "opencl"}
    for dialect, source in found.items():
        result = naiveopt.optimize(source, filename="m.cu" if dialect == "cuda" else "m.cl")
        said = " ".join(r.message for r in result.remarks if r.pass_name == "inline-helpers")
        assert "clamp_hi (1 call)" in said, said
        assert result.verified, [k.verification.detail for k in result.kernels]


def test_generator_gives_some_cuda_kernels_c_linkage():
    """Some CUDA cases declare their kernels ``extern "C"``, head by head or in one block
    (after the includes); the front end reads them in place and they verify."""
    drawn = [generate_case(11, i, [], ("global",)) for i in range(300)]
    heads = [c for c in drawn if 'extern "C" __global__' in c.source]
    blocks = [c for c in drawn if 'extern "C" {' in c.source]
    assert heads and blocks, (len(heads), len(blocks))
    assert all(c.dialect == "cuda" and "template" not in c.source for c in heads + blocks)
    for case in heads[:1] + blocks[:1]:
        outcome = run_case(case)
        assert outcome.kind in ("passed", "skipped"), (outcome.kind, outcome.detail)


def test_generator_declares_some_opencl_blocks_as_required_work_group_sizes():
    """Some OpenCL cases whose pragma gives the block require it on their kernels
    (``reqd_work_group_size``), before or after ``void``; they verify (the attribute is the
    naive block: any other local size the runtime refuses)."""
    drawn = [generate_case(11, i, [], ("global",)) for i in range(300)]
    required = [c for c in drawn if "reqd_work_group_size(" in c.source]
    assert len(required) >= 2 and all(c.dialect == "opencl" for c in required)
    assert any("__kernel __attribute__" in c.source for c in required) and \
        any("__kernel void __attribute__" in c.source for c in required)
    outcome = run_case(required[0])
    assert outcome.kind == "passed", (outcome.kind, outcome.detail)


def test_unsigned_size_variant_declares_the_clamped_sizes_unsigned():
    """The sizes a clamp-if tests become unsigned parameters, compared through a cast; other
    sizes and files with min/max calls are left as they are."""
    from naiveopt.fuzz.generate import unsigned_size_variant

    class Always(random.Random):
        def random(self):
            return 0.0

    source = ("__global__ void k(float *A, int N, int M)\n{\n    int tap1 = i - 1;\n"
              "    if (tap1 < 0) tap1 = 0; else if (tap1 >= N) { tap1 = N - 1; }\n"
              "    int tap2 = i + 1;\n    if (N <= tap2) tap2 = N - 1;\n"
              "    A[tap1 * M + tap2] = 0.0f;\n}\n")
    out = unsigned_size_variant(source, Always(0), "cuda")
    assert re.search(r", (unsigned|unsigned int) N, int M\)", out), out
    assert "tap1 >= (int)N)" in out and "((int)N <= tap2)" in out
    assert unsigned_size_variant(source.replace("i - 1", "max(i - 1, 0)"), Always(0),
                                 "cuda") == source.replace("i - 1", "max(i - 1, 0)")


def test_generator_puts_unreadable_kernels_beside_the_others():
    """Some cases end with a kernel naiveopt does not read (frontend/verbatim.py: a warp
    shuffle sum in the kernel or a helper, a printf), in both dialects; a case runs clean (the
    kernel reported, carried into an output of its dialect, and the output builds) and its
    other kernels verify."""
    from naiveopt.fuzz.generate import UNREADABLE_KERNEL

    drawn = [generate_case(11, i, [], ("global",)) for i in range(300)]
    unread = [c for c in drawn if UNREADABLE_KERNEL in c.source]
    assert len(unread) >= 8
    text = "".join(c.source for c in unread)
    for form in ("__shfl_down_sync", "printf(", "naiveopt_fuzz_warp_sum(s)", "__kernel void"):
        assert form in text, form
    for case in (next(c for c in unread if c.dialect == "opencl"),
                 next(c for c in unread if c.dialect == c.target == "cuda")):
        outcome = run_case(case)
        assert outcome.kind == "passed", (case.index, outcome.kind, outcome.detail)


def test_component_stores_are_compared_by_verification():
    """A case that updates components of a float4 array (``Q[i].y += B[i];``) verifies that
    array too: the element is written (analysis/memory_expressions.py), not only read."""
    drawn = [generate_case(11, i, [], ("global",)) for i in range(300)]
    case = next(c for c in drawn if re.search(r"float4 \*Q\b", c.source))
    result = naiveopt.optimize(case.source, filename=case.filename, target=case.target,
                               arch=case.arch, options=case.options, defines=case.defines)
    (k,) = [k for k in result.kernels if "Q" in k.verification.detail]
    assert k.verification.status == "passed"
    assert re.search(r"\bQ\b[^;]*match naive kernel", k.verification.detail)
