// CUDA math: row softmax with indexed rows (no pointer offsets), -FLT_MAX as the start of the
// running max, fmaxf and expf, <float.h> included for FLT_MAX.
// EXPECT-PASSES: coalesce
// EXPECT: verified
#include <float.h>

#pragma naiveopt sizes(rows=140, cols=61) array(x, rows, cols) array(y, rows, cols)
__global__ void softmax_rows(const float *x, float *y, int rows, int cols)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        float m = -FLT_MAX;
        for (int c = 0; c < cols; c++)
            m = fmaxf(m, x[r * cols + c]);
        float s = 0.0f;
        for (int c = 0; c < cols; c++)
            s += expf(x[r * cols + c] - m);
        for (int c = 0; c < cols; c++)
            y[r * cols + c] = expf(x[r * cols + c] - m) / s;
    }
}
