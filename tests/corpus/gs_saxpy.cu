// Grid-stride loop (the "CUDA Pro Tip" form): any launch size covers n elements.
// EXPECT-PASSES: none
// EXPECT: verified
#pragma naiveopt sizes(n=5003) threads(1024) array(x, n) array(y, n) scalar(a, 3.0)
__global__ void saxpy_gs(int n, float a, const float *x, float *y)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x;
         i < n;
         i += blockDim.x * gridDim.x)
    {
        y[i] = a * x[i] + y[i];
    }
}
