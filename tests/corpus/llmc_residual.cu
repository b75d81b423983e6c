// llm.c style: residual forward, the simplest kernel of the training loop.
// EXPECT-PASSES: none
// EXPECT: verified
#pragma naiveopt sizes(N=5000) array(out, N) array(inp1, N) array(inp2, N)
__global__ void residual_forward_kernel(float* out, const float* inp1, const float* inp2, int N) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < N) {
        out[idx] = inp1[idx] + inp2[idx];
    }
}
