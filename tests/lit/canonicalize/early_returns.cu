// merge-guards: two early returns in a row (the second with the bound on the left) are one,
// and an if that holds nothing but another if is one guard: the kernel shape the staging
// passes read. thread-block-merge declined both before ("cannot hoist the guard").
// RUN: %naiveopt %s --explain -o %t.cu 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: %naiveopt %s --no-opt --no-verify | FileCheck %s
// RUN: %naiveopt %s --disable-pass=merge-guards --passes=thread-block-merge --explain --no-verify 2>&1 | FileCheck %s --check-prefix=OFF

#pragma naiveopt sizes(M=50, N=33, K=41) block(16, 16)
#pragma naiveopt array(a, M, K) array(b, K, N) array(c, M, N)
__global__ void two_returns(const float *a, const float *b, float *c, int M, int N, int K)
{
    const int col = threadIdx.x + blockIdx.x * blockDim.x;
    const int row = threadIdx.y + blockIdx.y * blockDim.y;
    if (row >= M)
        return;
    if (N <= col) {
        return;
    }
    float acc = 0.f;
    for (int i = 0; i < K; i++)
        acc += a[row * K + i] * b[i * N + col];
    c[row * N + col] = acc;
}

__global__ void nested_ifs(const float *a, const float *b, float *c, int M, int N, int K)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < M) {
        if (col < N) {
            float acc = 0.f;
            for (int i = 0; i < K; i++)
                acc += a[row * K + i] * b[i * N + col];
            c[row * N + col] = acc;
        }
    }
}

// REMARK: two_returns: remark [merge-guards] applied: 1 guard(s) merged: if (row >= M || N <= col) return;
// REMARK: nested_ifs: remark [merge-guards] applied: 1 guard(s) merged: if (row < M && col < N)
// REMARK: two_returns: remark [thread-space] analysis: thread space from bounds guard: (N, M)
// REMARK: two_returns: remark [thread-block-merge] applied:
// REMARK: nested_ifs: remark [thread-block-merge] applied:
// REMARK: two_returns: verification passed
// REMARK: nested_ifs: verification passed

// CHECK-LABEL: __global__ void two_returns(
// CHECK: if (row >= M || N <= col) {
// CHECK-NEXT: return;
// CHECK-NEXT: }
// CHECK-NEXT: float acc = 0.f;
// CHECK-LABEL: __global__ void nested_ifs(
// CHECK: if (row < M && col < N) {
// CHECK-NEXT: float acc = 0.f;

// OFF: two_returns: remark [thread-block-merge] missed: {{.*}}cannot hoist the guard
