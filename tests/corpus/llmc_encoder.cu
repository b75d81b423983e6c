// llm.c style: encoder forward, token and position embeddings gathered through an int index
// array, every (b, t, c) output by its own thread, flat index split with / and %.
// EXPECT-PASSES: none
// EXPECT: verified
#pragma naiveopt sizes(B=2, T=13, C=40, V=31) array(out, B, T, C) array(inp, B, T)
#pragma naiveopt array(wte, V, C) array(wpe, T, C)
__global__ void encoder_forward_kernel2(float* out,
                                        const int* inp, const float* wte, const float* wpe,
                                        int B, int T, int C, int V) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    int N = B * T * C;

    if (idx < N) {
        int bt = idx / C;
        int b = bt / T;
        int t = bt % T;
        int c = idx % C;

        int ix = inp[b * T + t];

        float* out_btc = out + b * T * C + t * C + c;
        const float* wte_ix = wte + ix * C + c;
        const float* wpe_tc = wpe + t * C + c;
        *out_btc = *wte_ix + *wpe_tc;
    }
}
