"""tiling/window.py's signed_view: the staged window's index arithmetic in signed integers
where the kernel's sizes are unsigned parameters (tests/corpus/tb_box_blur_unsigned_dims.cu
runs it end to end)."""
from naiveopt.ir.build import statements
from naiveopt.ir.cgen import to_c
from naiveopt.passes.optimize.tiling.window import signed_view


def _view(text: str, casts: dict[str, str]) -> str:
    node = statements(f"v = {text};")[0].rvalue
    return " ".join(to_c(signed_view(node, casts)).split())


def test_unsigned_names_are_read_as_int_and_their_clamp_compiles_in_opencl():
    out = _view("(y - 1) < (H + 1) && min(max(y - 1, 0), H - 1) >= 0", {"H": "int"})
    assert out.startswith("y - 1 < ((int) H) + 1 && ")
    # int against int: no cast of the operands, OpenCL's min(int, int) is found
    assert "min(max(y - 1, 0), ((int) H) - 1)" in out


def test_a_64_bit_size_makes_the_min_max_operands_long():
    out = _view("min(max(x - 1, 0), W - 1) * W", {"W": "long"})
    assert out == "min((long) max(x - 1, 0), (long) (((long) W) - 1)) * ((long) W)"


def test_signed_names_and_other_calls_are_left_alone():
    assert _view("min(x, N - 1) + f(W)", {"W": "int"}) == "min(x, N - 1) + f((int) W)"
    assert _view("min(x, N - 1)", {}) == "min(x, N - 1)"


def test_an_output_that_does_not_build_fails_verification_and_falls_back(monkeypatch):
    """Without the signed view, the blur's OpenCL output calls min(int, uint), which does not
    build: that fails the output's verification (not the input), and outside the test
    suite's raise mode the file is compiled again without the stencil pass, and verifies."""
    import os

    import naiveopt
    from naiveopt.passes.optimize.tiling import window

    path = os.path.join(os.path.dirname(__file__), "corpus", "tb_box_blur_unsigned_dims.cu")
    with open(path, encoding="utf-8") as fh:
        source = fh.read()
    monkeypatch.setattr(window, "signed_view", lambda node, casts: node)
    options = {"cost_model": "unlimited"}
    result = naiveopt.optimize(source, filename=path, target="opencl", options=options)
    k = result.kernels[0]
    assert k.verification.status == "failed" and k.verification.blames_output
    assert "the output does not build" in k.verification.detail
    monkeypatch.delenv("NAIVEOPT_INTERNAL_ERRORS")
    result = naiveopt.optimize(source, filename=path, target="opencl", options=options)
    k = result.kernels[0]
    assert k.verification.status == "passed" and "stencil" not in k.passes
    assert [e.pass_name for e in result.internal_errors] == ["stencil"]
