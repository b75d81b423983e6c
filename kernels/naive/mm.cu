// Naive matrix-matrix multiply: C[H][W] = A[H][K] * B[K][W], one output element per thread.
__global__ void mm(const float * __restrict__ A, const float * __restrict__ B,
                   float * __restrict__ C, int H, int W, int K)
{
    int col = threadIdx.x + blockIdx.x * blockDim.x;
    int row = threadIdx.y + blockIdx.y * blockDim.y;
    if (row < H && col < W) {
        float sum = 0.0f;
        for (int k = 0; k < K; k++)
            sum += A[row * K + k] * B[k * W + col];
        C[row * W + col] = sum;
    }
}
