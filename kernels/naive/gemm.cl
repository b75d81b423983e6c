// PolyBench/GPU GEMM: C = alpha*A*B + beta*C, A [NI][NK], B [NK][NJ], C [NI][NJ].
__kernel void gemm_kernel(__global float *a, __global float *b, __global float *c,
                          float alpha, float beta, int ni, int nj, int nk)
{
    int j = get_global_id(0);
    int i = get_global_id(1);

    if ((i < ni) && (j < nj)) {
        c[i * nj + j] *= beta;
        for (int k = 0; k < nk; k++) {
            c[i * nj + j] += alpha * a[i * nk + k] * b[k * nj + j];
        }
    }
}
