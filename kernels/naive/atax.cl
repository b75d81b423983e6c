// PolyBench/GPU ATAX: y = A^T (A x), A is [NX][NY]. Two kernels as in PolyBench/GPU.
__kernel void atax_kernel1(__global float *A, __global float *x, __global float *tmp, int nx, int ny)
{
    int i = get_global_id(0);

    if (i < nx) {
        tmp[i] = 0.0f;
        for (int j = 0; j < ny; j++) {
            tmp[i] += A[i * ny + j] * x[j];
        }
    }
}

__kernel void atax_kernel2(__global float *A, __global float *y, __global float *tmp, int nx, int ny)
{
    int j = get_global_id(0);

    if (j < ny) {
        y[j] = 0.0f;
        for (int i = 0; i < nx; i++) {
            y[j] += A[i * ny + j] * tmp[i];
        }
    }
}
