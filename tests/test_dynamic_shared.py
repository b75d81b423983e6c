"""Dynamic shared memory (ir/dynamic_shared.py): CUDA's ``extern __shared__ T s[];`` and
OpenCL's ``__local T *s`` parameters are accepted, written in each dialect's own form,
verified at the size the naive kernel's accesses reach (no pragma), kept as written by the
passes with the reason, and sized by the host: the CUDA launcher takes the bytes, the OpenCL
output's header names the argument."""
from __future__ import annotations

import os
import re
import shutil

import numpy as np
import pytest

import naiveopt
from naiveopt.errors import NaiveoptError
from naiveopt.api import compile_module
from naiveopt.frontend import parse_module, parse_unit
from naiveopt.verify import opencl
from naiveopt.verify.check import make_args

from conftest import compile_cuda

#: The reduction whitepaper's first kernel, as the CUDA samples write it (interleaved
#: addressing, one partial sum per block), with its host launch.
CUDA = """\
__global__ void reduce0(const float *g_idata, float *g_odata, unsigned int n)
{
    extern __shared__ float sdata[];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    sdata[tid] = (i < n) ? g_idata[i] : 0;
    __syncthreads();
    for (unsigned int s = 1; s < blockDim.x; s *= 2) {
        if ((tid % (2 * s)) == 0)
            sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) g_odata[blockIdx.x] = sdata[0];
}

void reduce(const float *d_in, float *d_out, unsigned int n)
{
    int threads = 256;
    int blocks = (n + threads - 1) / threads;
    reduce0<<<blocks, threads, threads * sizeof(float)>>>(d_in, d_out, n);
}
"""

#: OpenCL passes local memory as arguments, anywhere in the list; a kernel may take several.
OPENCL = """\
#pragma naiveopt sizes(n=1000)
__kernel void reverse_in_group(__global const float *in, __local float *tile,
                               __global float *out, int n)
{
    int l = get_local_id(0), g = get_global_id(0);
    tile[l] = g < n ? in[g] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (g < n)
        out[g] = tile[get_local_size(0) - 1 - l];
}
__kernel void two_buffers(__global const float *a, __global float *out, __local float *s,
                          __local int *t, int n)
{
    int l = get_local_id(0), g = get_global_id(0);
    s[l] = g < n ? a[g] : 0.0f;
    t[l] = l;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (g < n)
        out[g] = s[(l + 1) % get_local_size(0)] + t[l];
}
"""


@pytest.mark.parametrize("target", ["cuda", "opencl"])
def test_cuda_extern_shared_is_verified_without_pragmas(target):
    result = naiveopt.optimize(CUDA, filename="red.cu", target=target)
    assert result.verified, result.unverified
    code = result.code
    if target == "cuda":
        assert "extern __shared__ float sdata[];" in code
        assert re.search(r"reduce0\(const float \*g_idata, float \*g_odata, unsigned int n\)",
                         code)
        # the launcher takes the bytes and passes them; the user's launch stays as written
        assert "size_t sdata_bytes" in code
        assert "reduce0<<<grid, block, sdata_bytes, stream>>>" in code
        assert "reduce0<<<blocks, threads, threads * sizeof(float)>>>(d_in, d_out, n);" in code
        assert "dynamic shared memory: sdata, sized by the launch" in code
    else:
        # the __local parameter after the others, named in the header with its position
        assert re.search(r"unsigned int n,\s*__local float \*sdata\)", code)
        assert "extern" not in code
        assert "argument 3: __local float *sdata: dynamic" in code
        assert "clSetKernelArg(k, 3, bytes, NULL)" in code


def test_passes_keep_kernels_with_dynamic_shared_memory_and_say_why():
    result = naiveopt.optimize(CUDA, filename="red.cu")
    missed = [r.message for r in result.remarks if r.kernel == "reduce0" and
              "sized by its launch" in r.message]
    assert missed, [r.message for r in result.remarks]
    assert "the kernel's shared array sdata is sized by its launch" in missed[0]


def test_the_local_argument_is_as_large_as_the_naive_kernel_reaches():
    """sdata[tid + s] with s < blockDim.x: the extent is read over the loop (isl), at the
    verification block, not guessed; the argument is local memory of that many floats."""
    module = parse_module("red.cu", CUDA)
    proc = module.procedures[0]
    assert [(p.name, p.address_space) for p in proc.params][-1] == ("sdata", "local")
    compiled = compile_module(parse_unit("red.cu", CUDA), "opencl", "sm_90", True)
    kspec = compiled.spec.kernels["reduce0"]
    local = next(a for a in kspec.args if a.name == "sdata")
    assert local.role == "local"
    block = kspec.block[0]
    sizes = next(iter(compiled.spec.sizes.values()))
    args = make_args(kspec, sizes, np.random.default_rng(0))
    value = args[[a.name for a in kspec.args].index("sdata")]
    assert isinstance(value, opencl.LocalBytes)
    # tid + s reaches 2 * block - 2 over the loop's range (the guard on tid % (2 * s) is not
    # affine): at least the block, at most twice it
    assert block * 4 <= value.nbytes <= 2 * block * 4


@pytest.mark.parametrize("target", ["cuda", "opencl"])
def test_opencl_local_pointer_parameters(target):
    if target == "cuda":
        with pytest.raises(NaiveoptError) as info:
            naiveopt.optimize(OPENCL, filename="loc.cl", target="cuda")
        assert "kernel 'two_buffers' takes 2 __local pointer parameters (s, t)" in \
            info.value.message
        assert info.value.line == 11
        one = OPENCL[:OPENCL.index("__kernel void two_buffers")]
        result = naiveopt.optimize(one, filename="loc.cl", target="cuda")
        assert result.verified, result.unverified
        assert "extern __shared__ float tile[];" in result.code
        assert re.search(r"reverse_in_group\(const float \*in, float \*out, int n\)",
                         result.code)
        assert "size_t tile_bytes" in result.code
        return
    result = naiveopt.optimize(OPENCL, filename="loc.cl", target="opencl")
    assert result.verified, result.unverified
    # each __local parameter where the kernel had it
    flat = " ".join(result.code.split())
    assert "reverse_in_group(__global const float *in, __local float *tile, __global float " \
        "*out, int n)" in flat
    assert "two_buffers(__global const float *a, __global float *out, __local float *s, " \
        "__local int *t, int n)" in flat
    assert "argument 1: __local float *tile: dynamic" in result.code


def test_a_wrong_output_reading_dynamic_shared_memory_is_caught(monkeypatch):
    """The check compares what the kernels write: an output that reverses the tile the
    wrong way round fails (local memory is passed, not skipped)."""
    from naiveopt.passes.functional import cuda_to_opencl

    original = cuda_to_opencl.CUDAToOpenCL.run

    def broken(self, proc, ctx):
        original(self, proc, ctx)
        from pycparser import c_ast
        from naiveopt.ir.rewrite import walk

        for node, _ in walk(proc.body):
            if isinstance(node, c_ast.ArrayRef) and isinstance(node.name, c_ast.ID) and \
                    node.name.name == "tile" and isinstance(node.subscript, c_ast.BinaryOp):
                node.subscript = c_ast.ID("l")
    one = OPENCL[:OPENCL.index("__kernel void two_buffers")]
    monkeypatch.setattr(cuda_to_opencl.CUDAToOpenCL, "run", broken)
    result = naiveopt.optimize(one, filename="loc.cl", target="opencl")
    kernel = result.kernels[0]
    # no pass changed the kernel, so a difference reads as "two runs differ" (policy.py):
    # never as passed
    assert kernel.verification.status != "passed", kernel.verification
    assert "two runs differ" in kernel.verification.detail, kernel.verification.detail


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not on PATH: CUDA output "
                    "not compiled")
def test_cuda_outputs_compile(tmp_path):
    for source, name in ((CUDA, "red.cu"),
                         (OPENCL[:OPENCL.index("__kernel void two_buffers")], "loc.cl")):
        result = naiveopt.optimize(source, filename=name, target="cuda", verify=False)
        path = tmp_path / (os.path.splitext(name)[0] + "_out.cu")
        path.write_text(result.code)
        done = compile_cuda(str(path), str(tmp_path))
        assert done.returncode == 0, done.stderr
