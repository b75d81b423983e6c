// Tutorial CUDA: an elementwise activation through a __device__ helper function.
// EXPECT-PASSES: none
// EXPECT: verified
__device__ float sigmoid(float x)
{
    return 1.0f / (1.0f + expf(-x));
}

#pragma naiveopt sizes(n=3001) array(x, n) array(y, n)
__global__ void sigmoid_kernel(const float *x, float *y, int n)
{
    int tid = threadIdx.x + blockIdx.x * blockDim.x;
    if (tid < n)
        y[tid] = sigmoid(x[tid]);
}
