// llm.c style: GELU (tanh approximation) forward, a scaling factor macro over sqrtf and M_PI.
// EXPECT-PASSES: none
// EXPECT: verified
#include <math.h>
#define GELU_SCALING_FACTOR sqrtf(2.0f / M_PI)

#pragma naiveopt sizes(N=4097) array(out, N) array(inp, N)
__global__ void gelu_forward_kernel(float* out, const float* inp, int N) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) {
        float xi = inp[i];
        float cube = 0.044715f * xi * xi * xi;
        out[i] = 0.5f * xi * (1.0f + tanhf(GELU_SCALING_FACTOR * (xi + cube)));
    }
}
