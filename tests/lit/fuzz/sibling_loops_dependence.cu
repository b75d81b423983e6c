// The dependence check bounded each access's iterator by the LAST loop of that name; the
// write in the first loop must be bounded by its own loop (k < W), which overlaps the reads.
// RUN: %naiveopt %s --arch sm_90 --require-verified --explain -o %t.cu 2>&1 | FileCheck %s
#pragma naiveopt sizes(N=100, W=64) threads(N) block(64) array(A, N, W) array(B, N)
__global__ void dep(float *A, float *B, int N, int W)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) {
        for (int k = 0; k < W; k++)
            A[i * W + k] = 2.0f * A[i * W + k] + 1.0f;
        float sum = 0.0f;
        for (int k = 0; k < W - 32; k++)
            sum += A[i * W + k + 32];
        B[i] = sum;
    }
}

// CHECK: dep: remark [coalesce] missed: A(idx, k + 32): {{.*}} A(idx, k) may write what A(idx, k + 32) reads through the tile (islpy: [N, W] -> { [idx_w, it_k_w, idx_r = idx_w, it_k_r = -32 + it_k_w] : 0 <= idx_w < N and 32 <= it_k_w < W })
// CHECK: dep: verification passed
