// const-propagation: a `const int` local with a uniform value is written into the loop
// headers, guards and indices that read it (the passes copy those into new places, the
// thread space goes to the host): thread merge then finds every name it copies, and the
// stencil's thread space is `n - 2`, not a local of the kernel. Loop bounds through macros
// (PolyBench's `_PB_NK`, itself a macro) work as they are, with a C89 iterator too.
// (--cost-model unlimited: staged wherever legal; whether a 3-tap filter pays is
// the stencil tests' question, not this file's)
// RUN: %naiveopt %s --cost-model unlimited --explain -o %t.cu 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: %naiveopt %s --no-opt --no-verify | FileCheck %s

#define NK_SIZE 27
#define _PB_NK NK_SIZE
#pragma naiveopt sizes(M=50, N=33, K=27, n=1001) block(16, 16)
#pragma naiveopt array(a, M, K) array(b, K, N) array(c, M, N) array(in, n) array(out, n)
__global__ void const_bound(const float *a, const float *b, float *c, int M, int N, int K)
{
    const int kk = K;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < M && col < N) {
        float acc = 0.0f;
        for (int k = 0; k < kk; k++)
            acc += a[row * kk + k] * b[k * N + col];
        c[row * N + col] = acc;
    }
}

__global__ void macro_bound(const float *a, const float *b, float *c, int M, int N)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < M && col < N) {
        float acc = 0.0f;
        int k;
        for (k = 0; k < _PB_NK; k++)
            acc += a[row * _PB_NK + k] * b[k * N + col];
        c[row * N + col] = acc;
    }
}

__global__ void radius(const float *in, float *out, int n)
{
    const int r = 4 / 2;
    const int taps = 2 * r + 1;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= r && i < n - r) {
        float s = 0.0f;
        for (int t = 0; t < taps; t++)
            s += in[i - r + t];
        out[i] = s;
    }
}

// REMARK: const_bound: remark [const-propagation] applied: const value(s) written where they are used: kk = K into loop header 1, index 1
// REMARK: radius: remark [const-propagation] applied: const value(s) written where they are used: r = 2 into guard 2, index 1; taps = 5 into loop header 1
// REMARK: macro_bound: remark [loop-iterators] applied:
// REMARK: radius: remark [thread-space] analysis: thread space from bounds guard: (n - 2, 1)
// REMARK: const_bound: remark [thread-merge] applied:
// REMARK: macro_bound: remark [thread-merge] applied:
// REMARK: radius: remark [stencil] applied:
// REMARK: const_bound: verification passed
// REMARK: macro_bound: verification passed
// REMARK: radius: verification passed

// CHECK-LABEL: __global__ void const_bound(
// CHECK: const int kk = K;
// CHECK: for (int k = 0; k < K; k++) {
// CHECK-NEXT: acc += a[row * K + k] * b[k * N + col];
// CHECK-LABEL: __global__ void macro_bound(
// CHECK: for (int k = 0; k < NK_SIZE; k++) {
// CHECK-LABEL: __global__ void radius(
// CHECK: if (i >= 2 && i < n - 2) {
// CHECK-NEXT: float s = 0.0f;
// CHECK-NEXT: for (int t = 0; t < 5; t++) {
// CHECK-NEXT: s += in[i - 2 + t];
