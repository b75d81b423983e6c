// llm.c style: cross-entropy forward, an int target per (b, t) indexes its probability row,
// reached through a pointer offset.
// EXPECT-PASSES: none
// EXPECT: verified
#pragma naiveopt sizes(B=3, T=29, V=50) array(losses, B, T) array(probs, B, T, V)
#pragma naiveopt array(targets, B, T)
__global__ void crossentropy_forward_kernel1(float* losses,
                                             const float* probs, const int* targets,
                                             int B, int T, int V) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < B * T) {
        int b = i / T;
        int t = i % T;
        const float* probs_bt = probs + b * T * V + t * V;
        int ix = targets[b * T + t];
        losses[b * T + t] = -logf(probs_bt[ix]);
    }
}
