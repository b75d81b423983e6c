// Tutorial CUDA: matrix multiply that leaves early instead of nesting under a guard.
// EXPECT-PASSES: thread-block-merge, thread-merge
// EXPECT: verified
#pragma naiveopt sizes(M=50, N=33, K=41) block(16, 16)
#pragma naiveopt array(a, M, K) array(b, K, N) array(c, M, N)
__global__ void gemm_naive(const float *a, const float *b, float *c, int M, int N, int K)
{
    const int col = threadIdx.x + blockIdx.x * blockDim.x;
    const int row = threadIdx.y + blockIdx.y * blockDim.y;
    if (row >= M || col >= N)
        return;

    float acc = 0.f;
    for (int i = 0; i < K; i++)
        acc += a[row * K + i] * b[i * N + col];
    c[row * N + col] = acc;
}
