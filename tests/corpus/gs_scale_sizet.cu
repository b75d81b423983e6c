// Grid-stride loop with size_t indices and stride (for arrays past 2^31 elements).
// EXPECT-PASSES: none
// EXPECT: verified
#pragma naiveopt sizes(n=3333) threads(768) array(data, n) scalar(factor, 1.5)
__global__ void scale(float *data, float factor, size_t n)
{
    size_t stride = (size_t)blockDim.x * gridDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        data[i] *= factor;
}
