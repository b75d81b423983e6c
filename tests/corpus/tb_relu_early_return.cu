// Tutorial CUDA: elementwise ReLU that returns early for the threads past the end.
// EXPECT-PASSES: vectorize
// EXPECT: verified
#pragma naiveopt sizes(n=2050) array(in, n) array(out, n)
__global__ void relu(const float *in, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = in[i];
    out[i] = v > 0.0f ? v : 0.0f;
}
