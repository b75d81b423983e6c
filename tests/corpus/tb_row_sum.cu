// Naive reduction without shared memory: one thread sums one row of a matrix.
// EXPECT-PASSES: coalesce|vectorize
// EXPECT: verified
#pragma naiveopt sizes(rows=250, cols=61) array(mat, rows, cols) array(sums, rows)
__global__ void rowSum(const float *mat, float *sums, int rows, int cols)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        float s = 0.0f;
        for (int c = 0; c < cols; c++)
            s += mat[r * cols + c];
        sums[r] = s;
    }
}
