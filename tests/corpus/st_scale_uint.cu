// unsigned int index and size with an early-return guard.
// EXPECT-PASSES: vectorize
// EXPECT: verified
#pragma naiveopt sizes(n=4001) array(in, n) array(out, n)
__global__ void halve(const float *in, float *out, unsigned int n)
{
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    out[i] = in[i] * 0.5f;
}
