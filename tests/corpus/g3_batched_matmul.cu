// 3-D grid: batched matrix multiply, the batch from blockIdx.z, each matrix at a batch stride.
// EXPECT-PASSES: thread-block-merge, thread-merge
// EXPECT: verified
// XFAIL: thread-block-merge: not staged for reuse: no 2-D form
// XFAIL: thread-merge: no staged loop to merge threads over
#pragma naiveopt sizes(batch=3, M=35, N=29, K=22) block(16, 16)
#pragma naiveopt array(A, batch, M, K) array(B, batch, K, N) array(C, batch, M, N)
__global__ void bmm(const float *A, const float *B, float *C, int batch, int M, int N, int K)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int b = blockIdx.z;
    if (row < M && col < N && b < batch) {
        float sum = 0.0f;
        for (int k = 0; k < K; k++)
            sum += A[(b * M + row) * K + k] * B[(b * K + k) * N + col];
        C[(b * M + row) * N + col] = sum;
    }
}
