// Dynamic shared memory: CUDA's extern __shared__ array becomes OpenCL's __local argument after
// the others (the header says which and how to set it); the CUDA output keeps the declaration
// and its launcher takes the bytes; the passes keep the kernel; verification sizes the local
// memory from the naive kernel's accesses (no pragma: sizes and thread space inferred).
// RUN: %naiveopt %s --target opencl --explain -o %t.cl 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// RUN: FileCheck %s < %t.cl
// RUN: %naiveopt %s --target cuda -o %t.cu 2>&1 | FileCheck %s --check-prefix=QUIET --allow-empty
// RUN: FileCheck %s --check-prefix=CUDA < %t.cu
__global__ void block_sums(const float *in, float *sums, int n)
{
    extern __shared__ float partial[];
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    partial[t] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (t < s)
            partial[t] += partial[t + s];
        __syncthreads();
    }
    if (t == 0)
        sums[blockIdx.x] = partial[0];
}

// EXPLAIN: block_sums: remark [coalesce] missed: the kernel's shared array partial is sized by its launch (dynamic shared memory): the optimization passes keep such kernels as written
// EXPLAIN: block_sums: verification passed
// CHECK: argument 3: __local float *partial: dynamic
// CHECK-NEXT: local memory, clSetKernelArg(k, 3, bytes, NULL)
// CHECK: __kernel void block_sums(__global const float *in, __global float *sums, int n,
// CHECK-NEXT: __local float *partial) {
// CHECK-NOT: extern
// CHECK: partial[t] = (i < n) ? (in[i]) : (0.0f);
// QUIET-NOT: warning
// CUDA: dynamic shared memory: partial, sized by the launch:
// CUDA: __global__ void block_sums(const float *in, float *sums, int n) {
// CUDA: extern __shared__ float partial[];
// CUDA: block_sums_launch(const float *in, float *sums, int n,
// CUDA-NEXT: int naiveopt_globalDimX,
// CUDA-NEXT: size_t partial_bytes,
// CUDA: block_sums<<<grid, block, partial_bytes, stream>>>(in, sums, n);
