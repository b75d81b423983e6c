// loop-iterators: k is read after the loop (the count of iterations, C89 style). The loop
// declares its own k; the value k had after it is assigned right after it, from the bounds
// (sink-declarations then declares k there), and thread-block-merge stages the loop. A loop
// that can break early keeps the shared k (its final value is not known), saying so; its
// sibling, strided by 3, still gets its own k and the final value 1 + ceil((K - 1) / 3) * 3.
// RUN: %naiveopt %s --explain -o %t.cu 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: %naiveopt %s --no-opt --no-verify | FileCheck %s

#pragma naiveopt sizes(M=50, N=33, K=41) block(16, 16)
#pragma naiveopt array(a, M, K) array(b, K, N) array(c, M, N)
__global__ void mm_count(const float *a, const float *b, float *c, int M, int N, int K)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int k;
    if (row < M && col < N) {
        float acc = 0.0f;
        for (k = 0; k < K; k++)
            acc += a[row * K + k] * b[k * N + col];
        c[row * N + col] = acc / k;
    }
}

__global__ void strided_count(const float *a, float *c, int M, int N, int K)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int k;
    if (row < M && col < N) {
        float acc = 0.0f;
        for (k = 1; k < K; k += 3) {
            if (a[row * K + k] > 0.5f)
                break;
            acc += a[row * K + k];
        }
        c[row * N + col] = acc + k;
        for (k = 1; k < K; k += 3)
            acc += a[row * K + k];
        c[row * N + col] += acc * k;
    }
}

// REMARK: mm_count: remark [loop-iterators] applied: 1 loop(s) declare their iterator: for (int k = 0; ...) then k = (0 < K) ? (K) : (0)
// REMARK: strided_count: remark [loop-iterators] missed: for (k = 1; ...) keeps k declared before it: k is read after the loop and the body may leave the loop early
// REMARK: strided_count: remark [loop-iterators] applied: 1 loop(s) declare their iterator: for (int k = 1; ...) then k = (1 < K) ? (1 + (K - 1 + 2) / 3 * 3) : (1)
// REMARK: mm_count: remark [sink-declarations] applied: 1 local(s) declared where first assigned: int k = (0 < K) ? (K) : (0)
// REMARK: mm_count: remark [thread-block-merge] applied:
// REMARK: mm_count: verification passed
// REMARK: strided_count: verification passed

// CHECK-LABEL: __global__ void mm_count(
// CHECK-NOT: int k;
// CHECK: for (int k = 0; k < K; k++) {
// CHECK: int k = (0 < K) ? (K) : (0);
// CHECK-NEXT: c[row * N + col] = acc / k;
// CHECK-LABEL: __global__ void strided_count(
// CHECK: int k;
// CHECK: for (k = 1; k < K; k += 3) {
// CHECK: c[row * N + col] = acc + k;
// CHECK-NEXT: for (int k = 1; k < K; k += 3) {
// CHECK: k = (1 < K) ? (1 + (K - 1 + 2) / 3 * 3) : (1);
// CHECK-NEXT: c[row * N + col] += acc * k;
