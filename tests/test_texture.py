"""Texture memory (``--memory texture``): the pass on the library, its emission in both
dialects (fetch widths 1, 2 and 4), images in the PoCL verifier, the sidecar, profiling."""
from __future__ import annotations

import copy
import json
import os
import re
import shutil

import pytest
from pycparser import c_ast

import naiveopt
from naiveopt import cuda_runner
from naiveopt.api import _verify, compile_module
from naiveopt.emit import render
from naiveopt.frontend import parse_unit
from naiveopt.ir.nodes import TexFetch
from naiveopt.ir.textures import bind_textures, fetches, param_layout
from naiveopt.passes.manager import PassContext, run_passes
from naiveopt.passes.pipeline import back_passes, optimization_pass_names
from naiveopt.verify.spec import load_metadata

from conftest import KERNELS_DIR, compile_cuda, run_cli, unsplit

FILES = sorted(f for f in os.listdir(KERNELS_DIR) if f.endswith((".cu", ".cl")))
NVCC = pytest.mark.skipif(shutil.which("nvcc") is None,
                          reason="nvcc not on PATH: emitted CUDA not compiled")
TEXTURE = {"memory": "texture"}


def optimize(name: str, **kw) -> naiveopt.OptimizeResult:
    path = os.path.join(KERNELS_DIR, name)
    with open(path, encoding="utf-8") as fh:
        return naiveopt.optimize(fh.read(), filename=path, options=TEXTURE, **kw)


#: Read-only arrays that stay pointers, and why (the remark the pass must give). None in the
#: library since demosaic's reads through its helpers are written out (inline-helpers); a
#: pointer passed to a helper that stays a call is kept (PASSED_ON below).
KEPT: dict[tuple[str, str], str] = {}


def read_only_arrays(name: str, kernel: str) -> set[str]:
    """The arrays the metadata says a kernel only reads (role 'in'): independent of the IR."""
    spec = load_metadata(os.path.join(KERNELS_DIR, os.path.splitext(name)[0] + ".toml"))
    return {a.name for a in spec.kernels[kernel].args if a.role == "in"}


@pytest.mark.parametrize("arch", ["sm_90", "gfx90a"])
@pytest.mark.parametrize("name", FILES)
def test_library_reads_inputs_through_textures_and_verifies(name, arch):
    # the output dialect alternates over the library (both dialects, both targets covered;
    # every pairing would double the time for little: the dialect is the last step)
    target = ("cuda", "opencl")[(FILES.index(name) + (arch == "gfx90a")) % 2]
    result = optimize(name, target=target, arch=arch)
    texture = [r for r in result.remarks if r.pass_name == "texture"]
    for k in result.kernels:
        assert k.verification.status == "passed", (k.name, k.verification.detail)
        assert [c.split()[0] for c in k.verification.checks] == ["test", "odd"]
        kept = {a for (kernel, a) in KEPT if kernel == k.name}
        arrays = {t["array"] for t in k.textures}
        assert arrays == read_only_arrays(name, k.name) - kept, (k.name, k.textures)
        assert all(target in t for t in k.textures)
        assert ("texture" in k.passes) == bool(arrays)
        said = {r.message for r in texture if r.kernel == k.name}
        for array in kept:
            assert f"{array}: not read through a texture: {KEPT[k.name, array]}" in said
        if not arrays:
            assert "no array qualifies for texture memory" in said
    for name_ in ("coalesce", "thread-block-merge"):        # the paper's choice for textures
        assert not any(name_ in k.passes for k in result.kernels)
        assert any(r.pass_name == name_ and r.kind == "missed" for r in result.remarks)


@NVCC
@pytest.mark.parametrize("name", [f for f in FILES if f.endswith(".cu")])
def test_texture_cuda_compiles_with_nvcc(name, tmp_path):
    result = optimize(name, verify=False)
    textures = any(k.textures for k in result.kernels)
    assert ("cudaTextureObject_t" in result.code) == textures
    assert ("tex1Dfetch<float" in result.code) == textures
    src = tmp_path / name
    src.write_text(result.code)
    done = compile_cuda(str(src), str(tmp_path))
    assert done.returncode == 0, done.stderr


def test_global_memory_leaves_arrays_alone_with_a_remark():
    result = naiveopt.optimize(open(os.path.join(KERNELS_DIR, "mv.cu")).read(),
                               filename=os.path.join(KERNELS_DIR, "mv.cu"), verify=False)
    assert "cudaTextureObject_t" not in result.code
    assert result.kernels[0].textures == []
    (remark,) = [r for r in result.remarks if r.pass_name == "texture"]
    assert remark.kind == "missed" and "--memory global" in remark.message


IN_PLACE = """\
#pragma naiveopt sizes(N=100) array(A, N) array(D, N)
__global__ void scale(float *A, double *D, int N)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) {
        A[i] = 2.0f * A[i] + (float)D[i];
    }
}
"""


def test_kernel_without_qualifying_arrays_says_why():
    result = naiveopt.optimize(IN_PLACE, filename="scale.cu", options=TEXTURE, verify=False)
    messages = {r.message for r in result.remarks if r.pass_name == "texture"}
    assert "A: not read through a texture: written by the kernel" in messages
    assert "D: not read through a texture: element type double has no texture format " \
           "here" in messages
    assert "no array qualifies for texture memory" in messages
    assert "cudaTextureObject_t" not in result.code and result.kernels[0].passes == []


CONSTANT = """\
#pragma naiveopt sizes(N=100) array(A, N) array(F, 4) array(B, N)
__kernel void weigh(__global const float *A, __constant float *F, __global float *B, int N)
{
    int i = get_global_id(0);
    if (i < N) {
        B[i] = A[i] * F[i % 4];
    }
}
"""


def test_opencl_constant_memory_stays_constant():
    result = naiveopt.optimize(CONSTANT, filename="weigh.cl", options=TEXTURE)
    (k,) = result.kernels
    assert k.verification.status == "passed", k.verification.detail
    assert [t["array"] for t in k.textures] == ["A"]
    assert re.search(r"__constant (const )?float \*F", result.code)
    assert "read_imagef(A, i).x" in result.code
    assert any(r.message == "F: not read through a texture: in constant memory (already "
               "cached)" for r in result.remarks)


PASSED_ON = """\
#pragma naiveopt sizes(N=100) array(A, N) array(B, N)
__device__ float first(const float *p)      /* a loop: it stays a call (inline-helpers) */
{
    float s = 0.0f;
    for (int k = 0; k < 2; k++)
        s += p[k];
    return s;
}
__global__ void gather(const float *A, float *B, int N)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) {
        B[i] = A[i] + first(A);
    }
}
"""


def test_array_passed_to_a_helper_stays_a_pointer():
    result = naiveopt.optimize(PASSED_ON, filename="gather.cu", options=TEXTURE)
    assert any(r.message.startswith("A: not read through a texture: used other than by "
                                    "subscripts") for r in result.remarks)
    assert result.kernels[0].verification.status == "passed"
    assert "tex1Dfetch" not in result.code


def test_mv_sidecar_says_how_to_create_the_textures(tmp_path):
    out = tmp_path / "mv_tex.cu"
    done = run_cli(os.path.join(KERNELS_DIR, "mv.cu"), "--memory", "texture", "-o", str(out))
    assert done.returncode == 0, done.stderr
    code = out.read_text()
    assert "tex1Dfetch<float>(A, " in code
    sidecar = json.loads((tmp_path / "mv_tex.cu.json").read_text())
    textures = sidecar["kernels"]["mv"]["textures"]
    # width 1 for A and B; vectorization may add wider textures of the same arrays
    assert {(t["param"], t["argument"]) for t in textures if t["width"] == 1} == {("A", 0),
                                                                                ("B", 1)}
    elements = {"A": "H * W", "B": "W"}
    for t in textures:
        width, count = t["width"], elements[t["array"]]
        value = "float" if width == 1 else f"float{width}"
        texels = count if width == 1 else f"({count}) / {width}"
        assert t["param"] == (t["array"] if width == 1 else f"{t['array']}_v{width}")
        assert f"cudaTextureObject_t {t['param']}," in code
        assert t["argument"] == {"A": 0, "B": 1}[t["array"]] and t["texels"] == texels
        assert t["cuda"]["resource"]["resType"] == "cudaResourceTypeLinear"
        assert t["cuda"]["resource"]["res.linear.sizeInBytes"] == f"{texels} * sizeof({value})"
        assert f"cudaCreateChannelDesc<{value}>()" in t["cuda"]["host_code"]
        assert f"cudaCreateTextureObject(&{t['param']}, &res, &desc, NULL)" in \
            t["cuda"]["host_code"]
    assert code.count("cudaTextureObject_t") == len(textures)

    result = optimize("mv.cu", target="opencl", verify=False)
    b = next(t for t in result.launch_json()["kernels"]["mv"]["textures"] if t["param"] == "B")
    assert b["opencl"]["desc"] == {"image_type": "CL_MEM_OBJECT_IMAGE1D_BUFFER",
                                   "image_width": "W", "buffer": "the cl_mem buffer of B"}
    assert b["opencl"]["format"] == {"image_channel_order": "CL_R",
                                     "image_channel_data_type": "CL_FLOAT"}


# ------------------------------------------------------------------ vector fetches
# The vectorization pass groups width-1 fetches into wider ones. These tests build such fetches
# by hand on a kernel whose thread i reads W consecutive elements of A, and check that they
# emit in both dialects, bind their own texture objects / images and verify on PoCL.
def wide_kernel(width: int, elem: str = "float") -> str:
    terms = " + ".join(f"A[{width} * i + {k}]" for k in range(width))
    return f"""\
#pragma naiveopt sizes(N=203) threads(N) array(A, {width}*N) array(B, N)
__global__ void sum{width}(const {elem} *A, {elem} *B, int N)
{{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) {{
        B[i] = {terms};
    }}
}}
"""


def widen(source: str, width: int, elem: str, shift: int = 0):
    """Compile ``source`` with textures, then replace the sum of ``width`` scalar fetches by
    the lanes of one ``width``-wide fetch at texel ``i + shift``; returns the Compiled."""
    others = [p for p in optimization_pass_names() if p != "texture"]
    c = compile_module(parse_unit("wide.cu", source), "cuda", "sm_90", True,
                       options={**TEXTURE, "disable": others})
    (proc,) = c.analysed.procedures
    assert len(fetches(proc.body)) == width
    store = next(n for n in _walk(proc.body) if isinstance(n, c_ast.Assignment))
    index = c_ast.BinaryOp("+", c_ast.ID("i"), c_ast.Constant("int", str(shift)))
    lanes = [c_ast.StructRef(TexFetch("A", copy.deepcopy(index), width, elem), ".",
                             c_ast.ID("xyzw"[k])) for k in range(width)]
    total = lanes[0]
    for lane in lanes[1:]:
        total = c_ast.BinaryOp("+", total, lane)
    store.rvalue = total
    bind_textures(proc, "cuda")
    return c


def _walk(node):
    yield node
    for _, child in node.children():
        yield from _walk(child)


def cuda_code(c) -> str:
    module = copy.deepcopy(c.analysed)
    run_passes(back_passes("cuda"), PassContext(module, "cuda", "sm_90",
                                                completed=list(c.completed)))
    return render(module, "cuda", "sm_90", c.geometries, {}, "wide.cu", None)


@pytest.mark.parametrize("width, elem", [(4, "float"), (2, "float"), (4, "int")])
def test_wide_fetches_emit_bind_and_verify(width, elem, tmp_path):
    source = wide_kernel(width, elem)
    c = widen(source, width, elem)
    cuda = cuda_code(c)
    vec = f"{elem}{width}"
    assert f"cudaTextureObject_t A_v{width}, {elem} *B" in cuda
    assert f"tex1Dfetch<{vec}>(A_v{width}, i + 0).x" in cuda
    opencl = c.opencl_module()
    (proc,) = opencl.procedures
    read = "read_imagef" if elem == "float" else "read_imagei"
    code = render(opencl, "opencl", "sm_90", c.geometries, {}, "wide.cu", None)
    if width == 4:      # an RGBA image over the same buffer, one read per fetch
        assert f"read_only image1d_buffer_t A_v4, __global {elem} *B" in code
        assert f"{read}(A_v4, i + 0).x" in code
        assert param_layout(proc) == [(0, 4), (1, 0), (2, 0)]
    else:               # no 2-channel buffer images on PoCL: two reads of the R image
        assert f"read_only image1d_buffer_t A, __global {elem} *B" in code
        assert f"(({vec})({read}(A, 2 * (i + 0)).x, {read}(A, 2 * (i + 0) + 1).x)).y" in code
        assert param_layout(proc) == [(0, 1), (1, 0), (2, 0)]
    (verdict,) = _verify(c, cuda).values()
    assert verdict.status == "passed", verdict.detail
    if shutil.which("nvcc"):
        src = tmp_path / "wide.cu"
        src.write_text(cuda)
        done = compile_cuda(str(src), str(tmp_path))
        assert done.returncode == 0, done.stderr


def test_verifier_reads_the_images_a_wrong_fetch_fails():
    source = wide_kernel(4)
    c = widen(source, 4, "float", shift=1)          # reads the next texel: wrong
    (verdict,) = _verify(c, cuda_code(c)).values()
    assert verdict.status == "failed" and "B[" in verdict.detail


def test_profile_of_a_texture_output_counts_no_texture_reads_as_global():
    from naiveopt.profile import profile_file

    path = os.path.join(KERNELS_DIR, "mv.cu")
    source = open(path).read()
    sizes = {"H": "256", "W": "128"}
    # the coalesced mv (split-reduction, which takes it at these sizes, off)
    (tex,) = profile_file(source, path, opt=True, options=unsplit(TEXTURE), defines=sizes)
    (glob,) = profile_file(source, path, opt=True, options=unsplit(), defines=sizes)
    assert {s.site.array for s in tex.sites} == {"C"}     # only the pointer C is traced
    assert tex.totals.global_load_sectors == 0 and tex.totals.global_store_sectors > 0
    assert glob.totals.global_load_sectors > 0


@pytest.mark.skipif(not cuda_runner.available(), reason="no CUDA GPU (cuda-python): texture "
                    "objects are only created on a GPU")
def test_bench_times_texture_output_on_the_gpu():
    from naiveopt.bench import bench_file

    path = os.path.join(KERNELS_DIR, "mv.cu")
    (result,) = bench_file(open(path).read(), path, device="cuda", options=TEXTURE,
                           defines={"H": "1024", "W": "1024"})
    assert "texture" in result.passes and result.optimized_s > 0

