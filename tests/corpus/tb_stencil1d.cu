// Tutorial CUDA: 1-D three-point stencil over the interior, boundary threads do nothing.
// EXPECT-PASSES: stencil
// EXPECT: verified
#pragma naiveopt sizes(n=1001) array(in, n) array(out, n)
__global__ void stencil3(const float *in, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i > 0 && i < n - 1)
        out[i] = 0.25f * in[i - 1] + 0.5f * in[i] + 0.25f * in[i + 1];
}
