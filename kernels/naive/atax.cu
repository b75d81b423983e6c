// PolyBench/GPU ATAX: y = A^T (A x), A is [NX][NY]. Two kernels as in PolyBench/GPU.
__global__ void atax_kernel1(float *A, float *x, float *tmp, int nx, int ny)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;

    if (i < nx) {
        tmp[i] = 0.0f;
        for (int j = 0; j < ny; j++) {
            tmp[i] += A[i * ny + j] * x[j];
        }
    }
}

__global__ void atax_kernel2(float *A, float *y, float *tmp, int nx, int ny)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;

    if (j < ny) {
        y[j] = 0.0f;
        for (int i = 0; i < nx; i++) {
            y[j] += A[i * ny + j] * tmp[i];
        }
    }
}
