// PolyBench/GPU style covariance, mean and centring kernels: 1-based data with `<=` bounds,
// a (M+1)-wide padded layout, float_n as a float parameter.
// EXPECT-PASSES(mean_kernel): register-promotion
// EXPECT-PASSES(reduce_kernel): none
// EXPECT: verified
typedef float DATA_TYPE;

#pragma naiveopt sizes(m=70, n=53) array(data, n + 1, m + 1) array(mean, m + 1)
#pragma naiveopt scalar(float_n, 3214212.01)
__global__ void mean_kernel(DATA_TYPE *mean, DATA_TYPE *data, float float_n, int m, int n)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x + 1;

    if ((j >= 1) && (j < (m + 1)))
    {
        mean[j] = 0.0;

        int i;
        for (i = 1; i < (n + 1); i++)
        {
            mean[j] += data[i * (m + 1) + j];
        }
        mean[j] /= (DATA_TYPE)float_n;
    }
}

__global__ void reduce_kernel(DATA_TYPE *mean, DATA_TYPE *data, int m, int n)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x + 1;
    int i = blockIdx.y * blockDim.y + threadIdx.y + 1;

    if ((i >= 1) && (i < (n + 1)) && (j >= 1) && (j < (m + 1)))
    {
        data[i * (m + 1) + j] -= mean[j];
    }
}
