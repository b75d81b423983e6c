// thread-merge, register-tiled: 16x16 threads, each computing an 8x8 micro-tile whose outputs
// come in runs of 4 adjacent ones (4 * tidx + 0..3 and 64 further), so that a run's values
// are one 128-bit shared load; A's tile is stored k-major (transposed, [8][128 + pad]) so its
// runs are adjacent too; whole k-tiles of 8 are peeled from the partial last one and their
// tile loop unrolls; the value read before the loop and used after it (gemm's c * beta) is
// sunk past the loop. Sizes are not multiples of the 128x128 block tile or of the k-tile.
// (async-pipeline, off here, would copy the tiles with cp.async: tests/test_async_pipeline.py.)
// RUN: %naiveopt %s --register-tile 8:8 --disable-pass async-pipeline --explain -o %t.cu 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: FileCheck %s < %t.cu

#pragma naiveopt sizes(N=300, M=260, K=77) array(A, N, K) array(B, K, M) array(C, N, M)
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

// REMARK: mm: remark [thread-merge] applied: each thread computes 8x8 outputs (x=8, y=8), register-tiled in runs of 4 adjacent ones; block 16x16 covers 128x128 outputs; k-tile 8, row tiles stored k-major
// REMARK: mm: verification passed

// CHECK: //   launch: mm<<<dim3((M + 127) / 128, (N + 127) / 128), dim3(16, 16)>>>
// CHECK: __shared__ float s_A[8][132];
// CHECK-NEXT: __shared__ float s_B[8][128];
// CHECK: int col_0_1 = 128 * bidx + 4 * tidx + 1;
// CHECK: int col_0_4 = 128 * bidx + 4 * tidx + 64;
// CHECK: for (; k0 + 8 <= K; k0 += 8) {
// CHECK: s_A[c][r] =
// CHECK: #pragma unroll
// CHECK-NEXT: for (int kk = 0; kk < 8; kk++) {
// CHECK: sum_0_0 += s_A[kk][4 * tidy] * s_B[kk][4 * tidx];
// CHECK: sum_0_1 += s_A[kk][4 * tidy] * s_B[kk][4 * tidx + 1];
// CHECK: if (k0 < K) {
// CHECK: for (int kk = 0; kk < 8 && k0 + kk < K; kk++) {
