// Tutorial CUDA: matrix-vector product that routes its loads through the read-only cache
// with __ldg, as the Kepler-era tuning guides suggested.
// EXPECT-PASSES: coalesce|vectorize
// EXPECT: verified
#pragma naiveopt sizes(rows=260, cols=83) array(A, rows, cols) array(x, cols) array(y, rows)
__global__ void gemv_ldg(const float *__restrict__ A, const float *__restrict__ x,
                         float *__restrict__ y, int rows, int cols)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        float acc = 0.0f;
        for (int c = 0; c < cols; ++c)
            acc += __ldg(&A[r * cols + c]) * __ldg(&x[c]);
        y[r] = acc;
    }
}
