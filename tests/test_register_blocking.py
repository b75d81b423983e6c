"""Register-blocked stencils (issue 18 item 3): thread-merge copies fused into one loop nest
(tiling/fusion.py), loops of constant trip count unrolled (ir/unroll.py), bodies specialised
for the common filter sizes behind the runtime version test, chosen by the cost model;
verified on both targets at several filter sizes, and read from sm_80/sm_90 SASS."""
from __future__ import annotations

import os
import re

import pytest

from conftest import sizes_metadata
from naiveopt.api import optimize
from naiveopt.cost.sass import cubin, hot_code_mix, nvdisasm_path
from naiveopt.ir.build import statements
from naiveopt.ir.cgen import to_c
from naiveopt.ir.unroll import unroll
from naiveopt.passes.optimize.tiling.fusion import fuse_copies

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KERNELS = os.path.join(REPO, "kernels", "naive")


def _text(stmts) -> str:
    return "\n".join(to_c(s) for s in stmts)


def _copy(c: int, extra: str = "") -> list:
    return statements(f"""
        float sum_{c} = 0.0f;
        for (int i_{c} = 0; i_{c} < K; i_{c}++)
            for (int j_{c} = 0; j_{c} < K; j_{c}++)
                sum_{c} += s_in[i_{c} + @tidy][j_{c} + @tidx + {c}] * s_f[i_{c}][j_{c}]{extra};
        out[@idx + {c}] = sum_{c};""")


def test_copies_share_one_loop_nest_and_keep_their_flags():
    fused, why = fuse_copies([_copy(0), _copy(1)], ["active_0", "active_1"],
                             {"s_in", "s_f"}, {"out", "K"})
    assert fused is not None, why
    text = _text(fused)
    assert text.count("for (") == 2                     # one nest, not one per copy
    assert "sum_0 += s_in[i_0 + tidy][(j_0 + tidx) + 0]" in text or \
        "sum_0 += s_in[i_0 + tidy][j_0 + tidx + 0]" in text, text
    assert "sum_1 += s_in[i_0 + tidy][j_0 + tidx + 1]" in text, text
    # the stores stay under each copy's flag, after the nest
    assert re.search(r"if \(active_0\)\s*\{\s*out\[", text)
    assert re.search(r"if \(active_1\)\s*\{\s*out\[", text)


@pytest.mark.parametrize("extra,why", [
    (" * g[j_{c}]", "reads global memory"),             # an inactive copy could fault
    (" / w", "divides"),                                # an inactive copy's 0: a CPU trap
])
def test_a_body_unsafe_for_inactive_copies_is_not_fused(extra, why):
    copies = [_copy(c, extra.replace("{c}", str(c))) for c in (0, 1)]
    fused, reason = fuse_copies(copies, ["a0", "a1"], {"s_in", "s_f"}, {"out", "K", "g", "w"})
    assert fused is None and why in reason


def test_an_initialiser_that_reads_memory_runs_under_the_flag():
    copies = [statements(f"""
        float acc_{c} = bias[@idx + {c}];
        for (int k_{c} = 0; k_{c} < 4; k_{c}++) acc_{c} += s_a[k_{c}][@tidx + {c}];
        out[@idx + {c}] = acc_{c};""") for c in (0, 1)]
    fused, why = fuse_copies(copies, ["a0", "a1"], {"s_a"}, {"out", "bias"})
    assert fused is not None, why
    text = _text(fused)
    assert re.search(r"float acc_0\s*\n", text)               # declared bare, before the nest
    assert re.search(r"if \(a0\)\s*\{\s*acc_0 = bias", text)


def test_constant_loops_unroll_and_indices_fold():
    body = statements("""
        for (int i = -1; i <= 1; i++)
            for (int j = 0; j < 3; j += 1)
                s += a[i + 1 + @tidy][j + 4 * @tidx + 1] * f[i + 1][j];""")
    out, count = unroll(body)
    text = _text(out)
    assert count == 4 and "for (" not in text           # the outer loop and 3 inner ones
    assert text.count("s += ") == 9
    assert "a[tidy][4 * tidx + 1] * f[0][0]" in text            # constants folded
    assert "a[2 + tidy][4 * tidx + 3] * f[2][2]" in text
    # a runtime bound, an iterator the body assigns, or too many iterations: left alone
    for src in ("for (int i = 0; i < n; i++) s += a[i];",
                "for (int i = 0; i < 4; i++) { s += a[i]; i += 1; }",
                "for (int i = 0; i < 100; i++) s += a[i];"):
        assert unroll(statements(src))[1] == 0, src


CASES = [
    # file, register tile, test sizes, odd sizes: every specialised filter size and one that
    # takes the fused loop nest (K = 9), at sizes that are not multiples of the coverage
    ("conv.cu", (4, 4), {"H": 64, "W": 128, "K": 3}, {"H": 67, "W": 45, "K": 5}),
    ("conv.cl", (4, 4), {"H": 64, "W": 128, "K": 7}, {"H": 37, "W": 133, "K": 9}),
    ("conv.cu", (4, 8), {"H": 64, "W": 64, "K": 9}, {"H": 71, "W": 29, "K": 7}),
    ("conv.cl", (8, 4), {"H": 64, "W": 64, "K": 5}, {"H": 71, "W": 29, "K": 3}),
]


@pytest.mark.parametrize("name,tile,test,odd", CASES,
                         ids=[f"{c[0]}-{c[1][0]}x{c[1][1]}" for c in CASES])
def test_register_blocked_convolutions_verify(tmp_path, name, tile, test, odd):
    path = os.path.join(KERNELS, name)
    with open(path, encoding="utf-8") as fh:
        source = fh.read()
    meta = sizes_metadata(tmp_path, "conv", test, odd)
    result = optimize(source, filename=path, metadata=meta,
                      options={"register_tile": tile})
    applied = [r.message for r in result.remarks
               if r.pass_name == "stencil" and r.kind == "applied"]
    assert applied and f"each thread computes {tile[0]}x{tile[1]} outputs in one loop nest" \
        in applied[0], applied
    (k,) = result.kernels
    assert k.verified, k.verification.detail
    code = result.code
    assert all(f"K == {v}" in code for v in (3, 5, 7)), "a body per common filter size"


def test_the_cost_model_chooses_register_blocking_for_conv():
    path = os.path.join(KERNELS, "conv.cu")
    with open(path, encoding="utf-8") as fh:
        result = optimize(fh.read(), filename=path, verify=False)
    chosen = [r.message for r in result.remarks
              if r.pass_name == "stencil" and " chosen: estimated" in r.message]
    assert chosen and "register-blocked" in chosen[0] and "K=5" in chosen[0], chosen


def _sass_available() -> str:
    if nvdisasm_path() is None:
        return "nvdisasm not installed"
    code, why = cubin('extern "C" __global__ void k(float *a) { a[0] = 1.0f; }', "sm_90")
    return "" if code is not None else why


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_conv_hot_code_issues_at_most_half_a_shared_load_per_ffma(arch):
    """Issue 18's static criterion for conv (K = 5 taps unrolled, 4x4 outputs a thread):
    at most 0.5 shared loads per FFMA, the inputs read as 128-bit vectors."""
    why = _sass_available()
    if why:
        pytest.skip(f"no SASS: {why}")
    path = os.path.join(KERNELS, "conv.cu")
    with open(path, encoding="utf-8") as fh:
        result = optimize(fh.read(), filename=path, arch=arch, verify=False, launcher=False,
                          options={"register_tile": (4, 4)})
    mix, why = hot_code_mix(result.code, arch)
    assert mix is not None, why
    loads = sum(mix.shared_loads().values())
    assert mix.ffma >= 100 and loads <= 0.5 * mix.ffma, mix.describe()
    assert mix.shared_loads().get("LDS.128", 0) > 0, mix.describe()


def test_launch_bounds_leave_the_measured_registers():
    """__launch_bounds__'s blocks per SM are budgeted by ptxas per register-file partition:
    conv_macro's 64-thread blocks of 40 registers fit 24 blocks there, not the calculator's
    25 (which left 32 registers a thread and spilled the unrolled body)."""
    why = _sass_available()
    if why:
        pytest.skip(f"no SASS: {why}")
    from naiveopt.cost.sass import disassemble
    path = os.path.join(KERNELS, "conv_macro.cu")
    with open(path, encoding="utf-8") as fh:
        result = optimize(fh.read(), filename=path, verify=False, launcher=False)
    bounds = re.search(r"__launch_bounds__\((\d+), (\d+)\)", result.code)
    assert bounds, result.code[:400]
    code, why = cubin(result.code, "sm_90")
    assert code is not None, why
    sass, why = disassemble(code)
    assert sass is not None and "SpillRefill" not in sass, bounds.group(0)


def test_straight_line_taps_and_a_store_of_their_value_are_fused():
    """A 3x3 filter written out (conv2d): each copy's value computed outside the flags, side
    by side, and only the store under the copy's flag."""
    copies = [statements(f"""
        float c_{c} = 0.5f;
        out[@idy * n + @idx + {c}] = c_{c} * s_a[@tidy][@tidx + {c}] + s_a[@tidy + 1][@tidx + {c}];
        """) for c in (0, 1)]
    taken: set[str] = set()
    fused, why = fuse_copies(copies, ["a0", "a1"], {"s_a"}, {"out", "n"}, {"out": "float"},
                             taken)
    assert fused is not None, why
    text = _text(fused)
    assert re.search(r"float out_value = c_0 \* s_a\[tidy\]\[tidx \+ 0\]", text), text
    assert re.search(r"if \(a1\)\s*\{\s*out\[.*\] = out_value_1;", text), text
    # a value that reads global memory stays under the flag, whole
    copies = [statements(f"out[@idx + {c}] = g[@idx + {c}];") for c in (0, 1)]
    fused, why = fuse_copies(copies, ["a0", "a1"], set(), {"out", "g"}, {"out": "float"})
    assert fused is None
