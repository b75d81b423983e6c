// A tutorial-style gemv: a typedef'd element type, size_t sizes, an early return and a C89
// iterator of type size_t declared at the top. The loop over a row is staged (coalesce) at
// unknown sizes, split over lanes at -D rows=2000 (test_split_reduction): both need the
// iterator canonicalized first.
// EXPECT-PASSES: coalesce
// EXPECT: verified
typedef float real;
#pragma naiveopt sizes(rows=45, cols=999)
#pragma naiveopt array(A, rows, cols) array(x, cols) array(y, rows)
__global__ void gemv(const real *A, const real *x, real *y, size_t rows, size_t cols)
{
    size_t r = blockIdx.x * blockDim.x + threadIdx.x;
    size_t c;
    real acc;
    if (r >= rows)
        return;
    acc = 0;
    for (c = 0; c < cols; c++)
        acc += A[r * cols + c] * x[c];
    y[r] = acc;
}
