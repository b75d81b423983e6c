// llm.c style: softmax over the last dimension, one row per thread, rows reached through
// pointer offsets (`const float* inp_row = inp + i * C;`), -INFINITY for the running max.
// EXPECT-PASSES: coalesce
// EXPECT: verified
#pragma naiveopt sizes(N=130, C=75) array(out, N, C) array(inp, N, C)
__global__ void softmax_forward_kernel1(float* out, const float* inp, int N, int C) {
    // inp is (N, C)
    // out is (N, C), each row of inp will get softmaxed
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) {
        const float* inp_row = inp + i * C;
        float* out_row = out + i * C;

        float maxval = -INFINITY;
        for (int j = 0; j < C; j++) {
            if (inp_row[j] > maxval) {
                maxval = inp_row[j];
            }
        }
        float sum = 0.0f;
        for (int j = 0; j < C; j++) {
            out_row[j] = expf(inp_row[j] - maxval);
            sum += out_row[j];
        }
        for (int j = 0; j < C; j++) {
            out_row[j] /= sum;
        }
    }
}
