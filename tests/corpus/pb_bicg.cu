// PolyBench/GPU style BiCG sub-kernels: s = A^T r (column walk) and q = A p (row walk).
// EXPECT-PASSES(bicg_kernel1): register-promotion
// (r[i], the same for every thread, stays scalar on NVIDIA: the loop is latency-bound)
// EXPECT-PASSES(bicg_kernel2): register-promotion, coalesce
// EXPECT: verified
typedef float DATA_TYPE;

#pragma naiveopt sizes(nx=83, ny=71)
#pragma naiveopt array(A, nx, ny) array(r, nx) array(s, ny) array(p, ny) array(q, nx)
__global__ void bicg_kernel1(int nx, int ny, DATA_TYPE *A, DATA_TYPE *r, DATA_TYPE *s)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;

    if (j < ny)
    {
        s[j] = 0.0f;

        int i;
        for (i = 0; i < nx; i++)
        {
            s[j] += r[i] * A[i * ny + j];
        }
    }
}

__global__ void bicg_kernel2(int nx, int ny, DATA_TYPE *A, DATA_TYPE *p, DATA_TYPE *q)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;

    if (i < nx)
    {
        q[i] = 0.0f;

        int j;
        for (j = 0; j < ny; j++)
        {
            q[i] += A[i * ny + j] * p[j];
        }
    }
}
