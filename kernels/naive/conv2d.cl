// PolyBench/GPU 2DCONV: 3x3 convolution with fixed coefficients, A and B are [NI][NJ].
// Only the interior 1 <= i < NI-1, 1 <= j < NJ-1 of B is written.
__kernel void Convolution2D_kernel(__global float *A, __global float *B, int ni, int nj)
{
    int j = get_global_id(0);
    int i = get_global_id(1);

    float c11, c12, c13, c21, c22, c23, c31, c32, c33;

    c11 = +0.2f;  c21 = +0.5f;  c31 = -0.8f;
    c12 = -0.3f;  c22 = +0.6f;  c32 = -0.9f;
    c13 = +0.4f;  c23 = +0.7f;  c33 = +0.10f;

    if ((i < ni - 1) && (j < nj - 1) && (i > 0) && (j > 0)) {
        B[i * nj + j] = c11 * A[(i - 1) * nj + (j - 1)] + c21 * A[(i - 1) * nj + (j + 0)] + c31 * A[(i - 1) * nj + (j + 1)]
                      + c12 * A[(i + 0) * nj + (j - 1)] + c22 * A[(i + 0) * nj + (j + 0)] + c32 * A[(i + 0) * nj + (j + 1)]
                      + c13 * A[(i + 1) * nj + (j - 1)] + c23 * A[(i + 1) * nj + (j + 0)] + c33 * A[(i + 1) * nj + (j + 1)];
    }
}
