// thread-merge after coalesce: coalesce stages A[col * K + k] in a shared tile; thread merge
// then makes each thread compute several outputs along y (forced to 1x2 here, as the paper's
// -merge0=1:2), each copy with its own row, guard and accumulator, so the value read from the
// tile serves both. Run alone, thread-merge finds no staged loop and declines, saying so.
// RUN: %naiveopt %s --passes=coalesce,thread-merge --merge 1:2 --explain -o %t.cu 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: FileCheck %s < %t.cu
// RUN: %naiveopt %s --passes=thread-merge --explain -o %t.alone.cu 2>&1 | FileCheck %s --check-prefix=ALONE

#pragma naiveopt sizes(N=45, M=37, K=29) array(A, M, K) array(B, N, K) array(C, N, M)
__global__ void dots(const float *A, const float *B, float *C, int N, int M, int K)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < N && col < M) {
        float sum = 0.0f;
        for (int k = 0; k < K; k++)
            sum += A[col * K + k] * B[row * K + k];
        C[row * M + col] = sum;
    }
}

// REMARK: dots: remark [coalesce] applied: staged in shared memory: A(idx, k) -> s_A
// REMARK: dots: remark [thread-merge] applied: each thread computes 1x2 outputs (x=1, y=2); block covers {{[0-9]+}}x{{[0-9]+}} outputs
// REMARK: dots: verification passed

// CHECK: // dots: passes: coalesce, thread-merge
// CHECK-NEXT: //   launch: dots<<<dim3((M + {{[0-9]+}}) / [[BX:[0-9]+]], (N + {{[0-9]+}}) / [[COVER:[0-9]+]]), dim3([[BX]], [[BY:[0-9]+]])>>>
// CHECK: __shared__ float s_A
// CHECK: int row_0_0 = [[COVER]] * bidy + tidy;
// CHECK-NEXT: const int active_0_0 = row_0_0 < N && col_0_0 < M;
// CHECK: int row_1_0 = [[COVER]] * bidy + tidy + [[BY]];
// CHECK-NEXT: const int active_1_0 = row_1_0 < N && col_1_0 < M;
// CHECK-NOT: row_2_0
// CHECK: float sum_0_0 = 0.0f;
// CHECK-NEXT: float sum_1_0 = 0.0f;
// CHECK: __syncthreads();
// CHECK: if (active_0_0) {
// CHECK-NEXT: sum_0_0 += s_A[tidx][kk] * B[row_0_0 * K + k];
// CHECK: if (active_1_0) {
// CHECK-NEXT: sum_1_0 += s_A[tidx][kk] * B[row_1_0 * K + k];
// CHECK: C[row_0_0 * M + col_0_0] = sum_0_0;
// CHECK: C[row_1_0 * M + col_1_0] = sum_1_0;

// ALONE: dots: remark [thread-merge] missed: no staged loop to merge threads over
// ALONE-NOT: applied
// ALONE: dots: verification passed
