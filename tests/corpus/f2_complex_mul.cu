// float2 values: pointwise complex multiply (the FFT-convolution step), make_float2.
// EXPECT-PASSES: none
// EXPECT: verified
#pragma naiveopt sizes(n=999) array(a, n) array(b, n) array(c, n)
__global__ void complexMul(const float2 *a, const float2 *b, float2 *c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float2 x = a[i];
        float2 y = b[i];
        c[i] = make_float2(x.x * y.x - x.y * y.y, x.x * y.y + x.y * y.x);
    }
}
