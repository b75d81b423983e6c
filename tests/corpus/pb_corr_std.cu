// PolyBench/GPU style correlation: standard deviation per column, 1-based `<=` loop bounds,
// sqrt and an epsilon clamp written with the ternary operator.
// EXPECT-PASSES: register-promotion
// EXPECT: verified
typedef float DATA_TYPE;
#define FLOAT_N 3214212.01f
#define EPS 0.005f

#pragma naiveopt sizes(m=67, n=45) array(mean, m + 1) array(std, m + 1) array(data, n + 1, m + 1)
__global__ void std_kernel(DATA_TYPE *mean, DATA_TYPE *std, DATA_TYPE *data, int m, int n)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x + 1;
    int i;

    if ((j >= 1) && (j <= m))
    {
        std[j] = 0.0;

        for (i = 1; i <= n; i++)
        {
            std[j] += (data[i * (m + 1) + j] - mean[j]) * (data[i * (m + 1) + j] - mean[j]);
        }
        std[j] /= FLOAT_N;
        std[j] = sqrt(std[j]);
        std[j] = std[j] <= EPS ? 1.0 : std[j];
    }
}
