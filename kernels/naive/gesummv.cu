// PolyBench/GPU GESUMMV: y = alpha*A*x + beta*B*x, A and B are [N][N].
__global__ void gesummv_kernel(float *a, float *b, float *x, float *y, float *tmp,
                               float alpha, float beta, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;

    if (i < n) {
        tmp[i] = 0.0f;
        y[i] = 0.0f;
        for (int j = 0; j < n; j++) {
            tmp[i] += a[i * n + j] * x[j];
            y[i] += b[i * n + j] * x[j];
        }
        y[i] = alpha * tmp[i] + beta * y[i];
    }
}
