// PolyBench/GPU MVT: x1 += A y_1, x2 += A^T y_2, A is [N][N].
__global__ void mvt_kernel1(float *a, float *x1, float *y_1, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;

    if (i < n) {
        for (int j = 0; j < n; j++) {
            x1[i] += a[i * n + j] * y_1[j];
        }
    }
}

__global__ void mvt_kernel2(float *a, float *x2, float *y_2, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;

    if (i < n) {
        for (int j = 0; j < n; j++) {
            x2[i] += a[j * n + i] * y_2[j];
        }
    }
}
