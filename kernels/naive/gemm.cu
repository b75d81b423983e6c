// PolyBench/GPU GEMM: C = alpha*A*B + beta*C, A [NI][NK], B [NK][NJ], C [NI][NJ].
__global__ void gemm_kernel(float *a, float *b, float *c, float alpha, float beta,
                            int ni, int nj, int nk)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;

    if ((i < ni) && (j < nj)) {
        c[i * nj + j] *= beta;
        for (int k = 0; k < nk; k++) {
            c[i * nj + j] += alpha * a[i * nk + k] * b[k * nj + j];
        }
    }
}
