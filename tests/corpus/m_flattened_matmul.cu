// ML-style kernels with one thread per output element over a flattened matrix: the 1-D id
// split into row and column by the kernel itself (`int bt = idx / OC; int oc = idx % OC;`)
// under `if (idx < BT * OC)`, as llm.c-like and tutorial code writes them, no annotations but
// the sizes. The delinearize pass reads them as 2-D kernels over (OC, BT): the linear layer
// (a product with the weights transposed) and the plain product are tiled, the transpose is
// staged; the bias add, which no pass changes, is written back as the 1-D kernel it was.
// EXPECT-PASSES(linear_forward): thread-block-merge, thread-merge
// EXPECT-PASSES(matmul_flat): thread-block-merge, thread-merge
// EXPECT-PASSES(transpose_flat): coalesce-writes
// EXPECT-PASSES(add_bias): none
// EXPECT: verified
#pragma naiveopt sizes(BT=67, OC=97, C=45)

__global__ void linear_forward(float *out, const float *inp, const float *weight,
                               const float *bias, int BT, int C, int OC) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < BT * OC) {
        int bt = idx / OC;
        int oc = idx % OC;
        float val = bias[oc];
        for (int i = 0; i < C; i++) {
            val += inp[bt * C + i] * weight[oc * C + i];
        }
        out[idx] = val;
    }
}

__global__ void matmul_flat(const float *a, const float *b, float *c, int BT, int C, int OC) {
    const int tid = threadIdx.x + blockIdx.x * blockDim.x;
    if (tid >= BT * OC) return;
    const int row = tid / OC;
    const int col = tid - row * OC;
    float acc = 0.0f;
    for (int k = 0; k < C; ++k)
        acc += a[row * C + k] * b[k * OC + col];
    c[row * OC + col] = acc;
}

__global__ void transpose_flat(float *out, const float *in, int BT, int OC) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    size_t n = (size_t)BT * OC;
    if (i < n) {
        size_t r = i / OC, c = i % OC;
        out[c * BT + r] = in[i];
    }
}

__global__ void add_bias(float *out, const float *bias, int BT, int OC) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < BT * OC) {
        out[idx] += bias[idx % OC];
    }
}
