// Naive matrix-vector multiply: C[H] = A[H][W] * B[W], one row per thread.
__global__ void mv(float *A, float *B, float *C, int H, int W)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < H) {
        float sum = 0.0f;
        for (int j = 0; j < W; j++) {
            sum += A[i * W + j] * B[j];
        }
        C[i] = sum;
    }
}
