// PolyBench/GPU BICG: s = A^T r, q = A p, A is [NX][NY]. Two kernels as in PolyBench/GPU.
__kernel void bicg_kernel1(__global float *A, __global float *r, __global float *s, int nx, int ny)
{
    int j = get_global_id(0);

    if (j < ny) {
        s[j] = 0.0f;
        for (int i = 0; i < nx; i++) {
            s[j] += r[i] * A[i * ny + j];
        }
    }
}

__kernel void bicg_kernel2(__global float *A, __global float *p, __global float *q, int nx, int ny)
{
    int i = get_global_id(0);

    if (i < nx) {
        q[i] = 0.0f;
        for (int j = 0; j < ny; j++) {
            q[i] += A[i * ny + j] * p[j];
        }
    }
}
