// Textbook CUDA: naive matrix multiply with row/col names, C[M][N] = A[M][K] * B[K][N].
// EXPECT-PASSES: thread-block-merge, thread-merge
// EXPECT: verified
#pragma naiveopt sizes(M=37, N=45, K=29) threads(N, M) block(16, 16)
#pragma naiveopt array(A, M, K) array(B, K, N) array(C, M, N)
__global__ void matMul(const float *A, const float *B, float *C, int M, int N, int K)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < M && col < N) {
        float sum = 0.0f;
        for (int k = 0; k < K; ++k) {
            sum += A[row * K + k] * B[k * N + col];
        }
        C[row * N + col] = sum;
    }
}
