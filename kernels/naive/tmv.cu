// Naive transposed matrix-vector multiply: C[W] = A^T * B, A is [H][W].
// One thread per column; the loop over rows reads A[i*W+col] (coalesced across threads).
__global__ void tmv(const float *A, const float *B, float *C, int H, int W)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (col < W) {
        C[col] = 0.0f;
        for (int i = 0; i < H; i++)
            C[col] += A[i * W + col] * B[i];
    }
}
