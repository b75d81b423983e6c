// Textbook CUDA: y = A x with one row per thread (the stride-n walk the texts warn about).
// EXPECT-PASSES: coalesce|vectorize
// EXPECT: verified
#pragma naiveopt sizes(m=300, n=77) array(A, m, n) array(x, n) array(y, m)
__global__ void gemv(const float *A, const float *x, float *y, int m, int n)
{
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < m) {
        float dot = 0.0f;
        for (int col = 0; col < n; col++)
            dot += A[row * n + col] * x[col];
        y[row] = dot;
    }
}
