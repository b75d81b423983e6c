// llm.c style: matmul forward kernel 1, out[bt][oc] = bias[oc] + inp[bt][:] . weight[oc][:],
// both operands reached through pointer offsets, the bias tested against NULL.
// EXPECT-PASSES: thread-block-merge, thread-merge
// EXPECT: verified
#pragma naiveopt sizes(BT=37, C=40, OC=51) block(8, 8)
#pragma naiveopt array(out, BT, OC) array(inp, BT, C) array(weight, OC, C) array(bias, OC)
__global__ void matmul_forward_kernel1(float* out,
                                       const float* inp, const float* weight, const float* bias,
                                       int BT, int C, int OC) {
    // out is (B,T,OC). OC is short for "output channels", e.g. OC = 4 * C
    // inp is (B,T,C), weight is (OC, C), bias is (OC)
    // in the naive kernel, every thread handles one element of out
    int bt = blockIdx.x * blockDim.x + threadIdx.x;
    int oc = blockIdx.y * blockDim.y + threadIdx.y;
    if (bt < BT && oc < OC) {
        float val = (bias != NULL) ? bias[oc] : 0.0f;
        const float* wrow = weight + oc * C;
        const float* inp_bt = inp + bt * C;
        for (int i = 0; i < C; i++) {
            val += inp_bt[i] * wrow[i];
        }
        out[bt * OC + oc] = val;
    }
}
