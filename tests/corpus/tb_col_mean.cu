// Naive reduction without shared memory: per-column mean, each thread walks a column.
// EXPECT-PASSES: coalesce|vectorize
// EXPECT: verified
// XFAIL: coalesce|vectorize: across threads: no read moves by one element between neighbouring threads or is the same for them
#pragma naiveopt sizes(nrows=57, ncols=301) array(data, nrows, ncols) array(mean, ncols)
__global__ void columnMean(const float *data, float *mean, int nrows, int ncols)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < ncols) {
        float s = 0;
        for (int i = 0; i < nrows; i++)
            s += data[i * ncols + j];
        mean[j] = s / nrows;
    }
}
