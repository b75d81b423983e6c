// prefetch after coalesce: coalesce stages A[col * K + k] in a shared tile per step of the
// loop over k; prefetch loads the first tile into registers before the loop, and in each step
// stores the registers into the tile, waits, and issues the next tile's loads into the
// registers before computing on this one, so the loads are in flight during the compute. Run
// alone, prefetch finds no staged loop and declines, saying so.
// RUN: %naiveopt %s --passes=coalesce,prefetch --explain -o %t.cu 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: FileCheck %s < %t.cu
// RUN: %naiveopt %s --passes=prefetch --explain -o %t.alone.cu 2>&1 | FileCheck %s --check-prefix=ALONE

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
// REMARK: dots: remark [prefetch] applied: prefetching {{[0-9]+}} registers per thread: the next tile's loads are issued before the compute
// REMARK: dots: verification passed

// CHECK: // dots: passes: coalesce, prefetch
// CHECK: __shared__ float s_A
// CHECK: float p_A[{{[0-9]+}}];
// CHECK-NEXT: {
// CHECK-NEXT: const int k0 = 0;
// CHECK: p_A[0] = (c + k0 < K && {{.*}}) ? (A[({{.*}}) * K + (c + k0)]) : (0);
// CHECK: for (int k0 = 0; k0 < K; k0 += [[T:[0-9]+]]) {
// CHECK: s_A[r][c] = p_A[0];
// CHECK: __syncthreads();
// CHECK: p_A[0] = (c + k0 + [[T]] < K && {{.*}})
// CHECK-NEXT: ? (A[({{.*}}) * K + (c + k0 + [[T]])])
// CHECK: sum += s_A[tidx][kk] * B[row * K + k];
// CHECK: __syncthreads();
// CHECK-NEXT: }

// ALONE: dots: remark [prefetch] missed: no staged loop
// ALONE-NOT: applied
// ALONE: dots: verification passed
