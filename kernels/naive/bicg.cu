// PolyBench/GPU BICG: s = A^T r, q = A p, A is [NX][NY]. Two kernels as in PolyBench/GPU.
__global__ void bicg_kernel1(float *A, float *r, float *s, int nx, int ny)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;

    if (j < ny) {
        s[j] = 0.0f;
        for (int i = 0; i < nx; i++) {
            s[j] += r[i] * A[i * ny + j];
        }
    }
}

__global__ void bicg_kernel2(float *A, float *p, float *q, int nx, int ny)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;

    if (i < nx) {
        q[i] = 0.0f;
        for (int j = 0; j < ny; j++) {
            q[i] += A[i * ny + j] * p[j];
        }
    }
}
