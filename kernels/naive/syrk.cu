// PolyBench/GPU SYRK: C = alpha*A*A^T + beta*C, A [N][M], C [N][N].
__global__ void syrk_kernel(float *a, float *c, float alpha, float beta, int n, int m)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;

    if ((i < n) && (j < n)) {
        c[i * n + j] *= beta;
        for (int k = 0; k < m; k++) {
            c[i * n + j] += alpha * a[i * m + k] * a[j * m + k];
        }
    }
}
