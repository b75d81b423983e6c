// thread-block-merge: in mm, A[row * K + k] is the same for every thread along x and
// B[k * M + col] for every thread along y. Neighbouring blocks are merged into one larger block
// that stages a row tile of A and a column tile of B in shared memory per step of the loop over
// k, so each value loaded serves a whole block row or column. The 1-D scale has no y along
// which to share: the pass declines, saying so.
// RUN: %naiveopt %s --passes=thread-block-merge --explain -o %t.cu 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: FileCheck %s < %t.cu

#pragma naiveopt sizes(N=45, M=37, K=29) array(A, N, K) array(B, K, M) array(C, N, M)
#pragma naiveopt array(x, N) array(y, N)
__global__ void mm(const float *A, const float *B, float *C, int N, int M, int K)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < N && col < M) {
        float sum = 0.0f;
        for (int k = 0; k < K; k++)
            sum += A[row * K + k] * B[k * M + col];
        C[row * M + col] = sum;
    }
}

__global__ void scale(const float *x, float *y, int N)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N)
        y[i] = 2.0f * x[i];
}

// REMARK: mm: remark [thread-block-merge] analysis: A(idy, k): the same for all threads along x: staged for reuse
// REMARK: mm: remark [thread-block-merge] analysis: B(k, idx): the same for all threads along y: staged for reuse
// REMARK: mm: remark [thread-block-merge] applied: merged blocks to {{[0-9]+}}x{{[0-9]+}} threads, tile {{[0-9]+}} along the loop: A(idy, k) shared along x (reused by {{[0-9]+}} threads), B(k, idx) shared along y
// REMARK: scale: remark [thread-block-merge] missed: 1-D kernel: no data is shared between threads of neighbouring blocks along y
// REMARK: mm: verification passed
// REMARK: scale: verification passed

// CHECK: // mm: passes: thread-block-merge
// CHECK-NEXT: //   launch: mm<<<dim3((M + {{[0-9]+}}) / [[BX:[0-9]+]], (N + {{[0-9]+}}) / [[BY:[0-9]+]]), dim3([[BX]], [[BY]])>>>
// CHECK: // scale: passes: none
// CHECK: __global__ void __launch_bounds__(512{{(, [0-9]+)?}})
// CHECK: mm(
// CHECK: __shared__ float s_A{{\[}}[[BY]]{{\]\[}}[[T:[0-9]+]]{{\]}};
// CHECK-NEXT: __shared__ float s_B{{\[}}[[T]]{{\]\[}}[[BX]]{{\]}};
// CHECK: for (int k0 = 0; k0 < K; k0 += [[T]]) {
// CHECK: (c + k0 < K && [[BY]] * bidy + r < N) ? (A[([[BY]] * bidy + r) * K + (c + k0)]) : (0);
// CHECK: (k0 + r < K && [[BX]] * bidx + c < M) ? (B[(k0 + r) * M + ([[BX]] * bidx + c)]) : (0);
// CHECK: __syncthreads();
// CHECK-NEXT: for (int kk = 0; kk < [[T]] && k0 + kk < K; kk++) {
// CHECK-NEXT: sum += s_A[tidy][kk] * s_B[kk][tidx];
// CHECK: if (active) {
// CHECK-NEXT: C[row * M + col] = sum;
// CHECK: __global__ void scale(
// CHECK-NOT: __shared__
// CHECK: y[i] = 2.0f * x[i];
