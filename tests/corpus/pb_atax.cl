// PolyBench/GPU style ATAX in OpenCL: two kernels, tmp = A x then y = A^T tmp,
// C89 iterators, DATA_TYPE, int sizes mirroring macros.
// EXPECT-PASSES(atax_kernel1): register-promotion, coalesce
// EXPECT-PASSES(atax_kernel2): register-promotion
// (tmp[i], the same for every thread, stays scalar on NVIDIA: the loop is latency-bound)
// EXPECT: verified
typedef float DATA_TYPE;

#pragma naiveopt sizes(nx=77, ny=93)
#pragma naiveopt array(A, nx, ny) array(x, ny) array(y, ny) array(tmp, nx)
__kernel void atax_kernel1(__global DATA_TYPE *A, __global DATA_TYPE *x, __global DATA_TYPE *tmp,
                           int nx, int ny)
{
    int i = get_global_id(0);
    int j;

    if (i < nx)
    {
        tmp[i] = 0;
        for (j = 0; j < ny; j++)
        {
            tmp[i] += A[i * ny + j] * x[j];
        }
    }
}

__kernel void atax_kernel2(__global DATA_TYPE *A, __global DATA_TYPE *y, __global DATA_TYPE *tmp,
                           int nx, int ny)
{
    int j = get_global_id(0);
    int i;

    if (j < ny)
    {
        y[j] = 0;
        for (i = 0; i < nx; i++)
        {
            y[j] += A[i * ny + j] * tmp[i];
        }
    }
}
