// size_t indices: matrix multiply with size_t row/col and loop counter, int sizes.
// EXPECT-PASSES: thread-block-merge, thread-merge
// EXPECT: verified
#pragma naiveopt sizes(M=33, N=49, K=27) block(16, 16)
#pragma naiveopt array(A, M, K) array(B, K, N) array(C, M, N)
__global__ void matmul_st(const float *A, const float *B, float *C, int M, int N, int K)
{
    size_t row = blockIdx.y * blockDim.y + threadIdx.y;
    size_t col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < M && col < N) {
        float sum = 0.0f;
        for (size_t k = 0; k < K; k++)
            sum += A[row * K + k] * B[k * N + col];
        C[row * N + col] = sum;
    }
}
