// CUDA math: log-sum-exp down each column, INFINITY as the start of the max, logf/expf.
// EXPECT-PASSES: coalesce|vectorize
// EXPECT: verified
// XFAIL: coalesce|vectorize: across threads: no read moves by one element between neighbouring threads or is the same for them
#pragma naiveopt sizes(rows=45, cols=333) array(x, rows, cols) array(out, cols)
__global__ void lse_cols(const float *x, float *out, int rows, int cols)
{
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c < cols) {
        float m = -INFINITY;
        for (int r = 0; r < rows; r++)
            m = fmaxf(m, x[r * cols + c]);
        float s = 0.0f;
        for (int r = 0; r < rows; r++)
            s += expf(x[r * cols + c] - m);
        out[c] = m + logf(s);
    }
}
