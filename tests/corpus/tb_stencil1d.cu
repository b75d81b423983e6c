// Tutorial CUDA: 1-D three-point stencil over the interior, boundary threads do nothing.
// EXPECT-PASSES: stencil
// EXPECT: verified
// OPTIONS: --cost-model=unlimited
// (staged wherever legal: at this file's small sizes, or with its few taps held in L1,
// the cost model keeps it as written by default; the form is what is tested here)
#pragma naiveopt sizes(n=1001) array(in, n) array(out, n)
__global__ void stencil3(const float *in, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i > 0 && i < n - 1)
        out[i] = 0.25f * in[i - 1] + 0.5f * in[i] + 0.25f * in[i + 1];
}
