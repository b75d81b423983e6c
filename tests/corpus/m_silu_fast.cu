// CUDA math: SiLU with the fast intrinsic __expf and __fdividef.
// EXPECT-PASSES: none
// EXPECT: verified
#pragma naiveopt sizes(n=3077) array(x, n) array(y, n)
__global__ void silu(const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        y[i] = __fdividef(v, 1.0f + __expf(-v));
    }
}
