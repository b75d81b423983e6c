// PolyBench/GPU style MVT in OpenCL: x1 += A y1 and x2 += A^T y2 in two kernels, with `<=`
// bounds written against N-1 and `i += 1` increments.
// EXPECT-PASSES(mvt_kernel1): register-promotion, coalesce
// EXPECT-PASSES(mvt_kernel2): register-promotion
// (y2[j], the same for every thread, stays scalar on NVIDIA: the loop is latency-bound)
// EXPECT: verified
typedef float DATA_TYPE;

#pragma naiveopt sizes(n=101) array(a, n, n) array(x1, n) array(x2, n) array(y1, n) array(y2, n)
__kernel void mvt_kernel1(__global DATA_TYPE *a, __global DATA_TYPE *x1, __global DATA_TYPE *y1, int n)
{
    int i = get_global_id(0);

    if (i < n)
    {
        int j;
        for (j = 0; j <= n - 1; j += 1)
        {
            x1[i] += a[i * n + j] * y1[j];
        }
    }
}

__kernel void mvt_kernel2(__global DATA_TYPE *a, __global DATA_TYPE *x2, __global DATA_TYPE *y2, int n)
{
    int i = get_global_id(0);

    if (i < n)
    {
        int j;
        for (j = 0; j <= n - 1; j += 1)
        {
            x2[i] += a[j * n + i] * y2[j];
        }
    }
}
