// unsigned indices and sizes: matrix-vector product with unsigned row/col and an unsigned loop.
// EXPECT-PASSES: coalesce|vectorize
// EXPECT: verified
#pragma naiveopt sizes(rows=270, cols=53) array(A, rows, cols) array(x, cols) array(y, rows)
__global__ void gemv_u(const float *A, const float *x, float *y, unsigned rows, unsigned cols)
{
    unsigned r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        float acc = 0.0f;
        for (unsigned c = 0; c < cols; c++)
            acc += A[r * cols + c] * x[c];
        y[r] = acc;
    }
}
