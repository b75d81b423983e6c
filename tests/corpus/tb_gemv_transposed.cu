// Textbook CUDA: y = A^T x, each thread walks one column of A (already coalesced across threads).
// EXPECT-PASSES: none
// (x[row], the same for every thread, stays scalar on NVIDIA: the loop is latency-bound;
// split-reduction needs the number of outputs, which no size gives here)
// EXPECT: verified
#pragma naiveopt sizes(m=91, n=333) array(A, m, n) array(x, m) array(y, n)
__global__ void gemvT(const float *A, const float *x, float *y, int m, int n)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (col < n) {
        float sum = 0.0f;
        for (int row = 0; row < m; row++)
            sum += A[row * n + col] * x[row];
        y[col] = sum;
    }
}
