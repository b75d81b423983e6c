"""Whole programs (issue "Drop-in outputs", item 3): a .cu file with host code is optimized in
place, every launch of a kernel whose launch changed is rewritten to call its launcher, the
rest of the host code stays byte for byte, and nvcc compiles and links the result as it did
the input. Launches naiveopt cannot rewrite keep their kernels naive.

The programs live in tests/lit/programs/, where lit tests pin the rewritten launch lines;
here each output is compiled (nvcc, warnings as errors) and compared with its input."""
from __future__ import annotations

import os
import re
import subprocess

import pytest

import naiveopt
from conftest import REPO, nvcc
from naiveopt.frontend.launch_sites import find_launch_sites, rewrite_launches

PROGRAMS_DIR = os.path.join(REPO, "tests", "lit", "programs")
PROGRAMS = sorted(os.path.join(PROGRAMS_DIR, f) for f in os.listdir(PROGRAMS_DIR)
                  if f.endswith(".cu"))
HOST_HEAD = re.compile(r"^// Host code of .*\n(//.*\n)?", re.M)


def optimize(path: str, **kw) -> naiveopt.OptimizeResult:
    with open(path, encoding="utf-8") as fh:
        return naiveopt.optimize(fh.read(), filename=path, **kw)


@pytest.fixture(scope="module")
def outputs():
    return {path: optimize(path) for path in PROGRAMS}


def test_there_are_programs_in_the_styles_people_write():
    names = {os.path.basename(p) for p in PROGRAMS}
    assert {"malloc_memcpy.cu", "unified.cu", "streams.cu", "loop.cu", "two_kernels.cu",
            "kept_naive.cu"} <= names


@pytest.mark.parametrize("path", PROGRAMS, ids=os.path.basename)
def test_program_kernels_are_verified(outputs, path):
    result = outputs[path]
    assert result.verified, result.unverified


@pytest.mark.parametrize("path", PROGRAMS, ids=os.path.basename)
def test_host_code_is_kept_but_for_the_launches(outputs, path):
    """Cut the launches out of the input and out of the output's host code (either form,
    found by a plain regular expression, not by the rewriter): the output's host code is then
    the input's lines in order, with only device code between them left out, and it ends as
    the input does; each launch of a kernel whose launch changed calls ``NAME_launch_from``
    now, and no launch of it is left."""
    result = outputs[path]
    with open(path, encoding="utf-8") as fh:
        source = fh.read()
    out_host = result.code[HOST_HEAD.search(result.code).end():]
    launch = re.compile(r"\b(\w+?)(?:<<<[^;]*?>>>|_launch_from)\((?:[^;]*?)\);")
    out_lines = launch.sub("LAUNCH;", out_host).strip().split("\n")
    in_lines = launch.sub("LAUNCH;", source).strip().split("\n")
    rest = iter(in_lines)
    assert all(any(line == other for other in rest) for line in out_lines)
    tail = in_lines[in_lines.index("int main()" if "int main()" in in_lines else
                                   next(x for x in in_lines if x.startswith("int main"))):]
    assert out_lines[-len(tail):] == tail
    changed = {k.name for k in result.kernels
               if re.search(rf"__launch_bounds__\([^)]*\)\s*{k.name}\(", result.code)
               or any(c != 1 for c in k.geometry.coarsen)}
    # or kept as written where the model estimates no gain (loop.cu's 4-point jacobi)
    assert changed or "kept_naive" in path or not any(k.passes for k in result.kernels)
    for name in changed:
        assert not re.search(rf"\b{name}<<<", out_host), name
    for k in result.kernels:
        if k.name not in changed:
            assert f"{k.name}_launch_from(" not in out_host


@nvcc
@pytest.mark.parametrize("path", PROGRAMS, ids=os.path.basename)
def test_program_output_compiles_and_links_as_the_input_did(outputs, path, tmp_path):
    flags = ["nvcc", "-arch=sm_90", "-std=c++17", "-Werror", "all-warnings"]
    done = subprocess.run(flags + ["-o", str(tmp_path / "naive"), path], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    out = tmp_path / os.path.basename(path)
    out.write_text(outputs[path].code, encoding="utf-8")
    done = subprocess.run(flags + ["-o", str(tmp_path / "app"), str(out)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr


def test_unrewritable_launches_keep_their_kernels_naive(outputs):
    result = outputs[os.path.join(PROGRAMS_DIR, "kept_naive.cu")]
    assert all(not k.passes for k in result.kernels)
    assert "__launch_bounds__" not in result.code and "__trap" not in result.code
    missed = {r.kernel: r.message for r in result.remarks
              if r.pass_name == "host-launches" and r.kind == "missed"}
    assert set(missed) == {"matmul", "scale", "transpose"}
    assert "cudaLaunchKernel" in missed["matmul"] or "other than in a launch" in missed["matmul"]


def test_without_launchers_the_output_is_device_code_only():
    """``--no-launcher`` writes what NVRTC compiles: the kernels, optimized freely (no host
    launch to keep), and no host code."""
    path = os.path.join(PROGRAMS_DIR, "kept_naive.cu")
    result = optimize(path, launcher=False, verify=False)
    assert any(k.passes for k in result.kernels)
    assert "int main()" not in result.code and "_launch(" not in result.code
    assert "#include <cstdio>" not in result.code


def test_opencl_output_of_a_program_optimizes_its_kernels_freely():
    """An OpenCL output leaves the host code out: its launches are the user's to write."""
    path = os.path.join(PROGRAMS_DIR, "kept_naive.cu")
    result = optimize(path, target="opencl", verify=False)
    assert any(k.passes for k in result.kernels)
    assert not [r for r in result.remarks if r.pass_name == "host-launches"]


# ----------------------------------------------------------------- the lexer and rewriter
KERNELS = {"k": 3}


def sites(text: str):
    return find_launch_sites(text, KERNELS)


def test_launch_sites_skip_comments_strings_and_members():
    text = ('// k<<<1, 1>>>(a, b, c);\n/* k<<<g, b>>>(x) */ const char *s = "k<<<";\n'
            "obj.k(1); p->k = 2; ns::k<<<1, 1>>>(a, b, c); char c = 'k';\n")
    assert sites(text) == []


def test_a_launch_is_split_at_depth_zero_with_its_layout_kept():
    text = "  k<<<dim3((n + 255) / 256, 1), f(2, 3), 0, s[i]>>>(a, g(b, c),\n      /* out */ d);\n"
    (site,) = sites(text)
    assert site.config == ["dim3((n + 255) / 256, 1)", " f(2, 3)", " 0", " s[i]"]
    assert site.args == ["a", " g(b, c)", "\n      /* out */ d"]
    assert site.stream == "s[i]" and not site.problem and (site.line, site.column) == (1, 3)
    new, count = rewrite_launches(text, KERNELS)
    assert count == 1
    assert new == ("  k_launch_from(dim3((n + 255) / 256, 1), f(2, 3), a, g(b, c),\n"
                   "      /* out */ d, s[i]);\n")


@pytest.mark.parametrize("text, problem", [
    ("cudaLaunchKernel((void *)k, g, b, args, 0, 0);", "other than in a launch"),
    ("auto f = &k;", "other than in a launch"),
    ("#define GO k<<<1, 1>>>(a, b, c)\n", "preprocessor line"),
    ("k<<<blocks, threads>>>(a, b, blocks * threads);", "reads the launch's geometry"),
    ("k<<<grid, block>>>(a, b, grid.x);", "reads the launch's geometry"),
    ("k<<<g, b>>>(a, b);", "passes 2 arguments to its 3 parameters"),
    ("k<<<g>>>(a, b, c);", "1 configuration arguments"),
    ("::k<<<g, b>>>(a, b, c);", "unqualified"),
])
def test_uses_that_cannot_be_rewritten_say_why(text, problem):
    (site,) = sites(text)
    assert problem in site.problem
    assert rewrite_launches(text, KERNELS) == (text, 0)


def test_geometry_names_inside_an_expression_are_not_the_launch_geometry():
    """``n`` is a size both the grid and an argument read: the launch is rewritten."""
    (site,) = sites("k<<<(n + 127) / 128, 128>>>(x, y, n);")
    assert site.problem == ""
