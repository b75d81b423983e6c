// Tutorial CUDA: matrix multiply with __restrict__ pointers and an unroll hint on the k loop,
// as one writes after reading the best-practices guide.
// EXPECT-PASSES: thread-block-merge, thread-merge
// EXPECT: verified
#pragma naiveopt sizes(M=47, N=38, K=52) block(16, 16)
#pragma naiveopt array(A, M, K) array(B, K, N) array(C, M, N)
__global__ void sgemm_unrolled(const float *__restrict__ A, const float *__restrict__ B,
                               float *__restrict__ C, int M, int N, int K)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < M && col < N) {
        float sum = 0.0f;
#pragma unroll 4
        for (int k = 0; k < K; ++k)
            sum += A[row * K + k] * B[k * N + col];
        C[row * N + col] = sum;
    }
}
