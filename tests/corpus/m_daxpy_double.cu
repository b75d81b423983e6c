// CUDA math in double precision: DAXPY with fma().
// EXPECT-PASSES: none
// EXPECT: verified
#pragma naiveopt sizes(n=2049) array(x, n) array(y, n) scalar(a, -0.25)
__global__ void daxpy(int n, double a, const double *x, double *y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = fma(a, x[i], y[i]);
}
