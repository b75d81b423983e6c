// stencil, register-blocked: each thread computes 4x4 adjacent outputs (4 * tidx + 0..3,
// 4 * tidy + 0..3) in one fused loop nest; for 3, 5 and 7 taps (K == 3, 5, 7) a body of its
// own with the taps unrolled, so that a window value serves every output that reads it from
// a register (nvcc issues 128-bit shared loads for the runs); other filter sizes up to the
// window's capacity take the fused nest; larger ones the unstaged body. Sizes are not
// multiples of the block's 128x32 outputs.
// RUN: %naiveopt %s --register-tile 4:4 --explain -o %t.cu 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: FileCheck %s < %t.cu
// RUN: %naiveopt %s --register-tile 4:4 --target opencl --explain -o %t.cl 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: FileCheck %s < %t.cl

#pragma naiveopt sizes(H=37, W=133, K=5) array(input, H + K - 1, W + K - 1) array(filt, K, K) array(output, H, W)
__global__ void conv(float *input, float *filt, float *output, int H, int W, int K)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int inW = W + K - 1;
    if (y < H && x < W) {
        float sum = 0.0f;
        for (int i = 0; i < K; i++)
            for (int j = 0; j < K; j++)
                sum += input[(y + i) * inW + (x + j)] * filt[i * K + j];
        output[y * W + x] = sum;
    }
}

// REMARK: conv: remark [stencil] applied: staged in shared memory once per block: input(idy + [0, K - 1], idx + [0, K - 1]) -> s_input, filt([0, K - 1], [0, K - 1]) -> s_filt; each thread computes 4x4 outputs in one loop nest, register-blocked in runs of 4 adjacent ones (taps unrolled for spans 2, 4, 6)
// REMARK: conv: verification passed

// CHECK: {{__shared__|__local}} float s_input[{{[0-9]+}}][144];
// CHECK: const int active_0_1 = y_0_1 < H && x_0_1 < W;
// CHECK: if (K - 1 <= 16) {
// CHECK: {{(__syncthreads|barrier)}}
// CHECK-NEXT: if (K == 5) {
// CHECK-NEXT: float sum_0_0 = 0.0f;
// CHECK: sum_3_3 += s_input[4 * tidy + 3][4 * tidx + 3] * s_filt[0][0];
// CHECK: sum_0_1 += s_input[4 * tidy][4 * tidx + 2] * s_filt[0][1];
// CHECK: sum_3_3 += s_input[4 * tidy + 7][4 * tidx + 7] * s_filt[4][4];
// CHECK-NOT: for (
// CHECK: if (active_0_0) {
// CHECK-NEXT: output[y_0_0 * W + x_0_0] = sum_0_0;
// CHECK: } else if (K == 3) {
// CHECK: } else if (K == 7) {
// CHECK: } else {
// CHECK: for (int i_0_0 = 0; i_0_0 < K; i_0_0++) {
// CHECK-NEXT: for (int j_0_0 = 0; j_0_0 < K; j_0_0++) {
// CHECK-NEXT: sum_0_0 += s_input[i_0_0 + 4 * tidy][j_0_0 + 4 * tidx] * s_filt[i_0_0][j_0_0];
// CHECK: s_input[i_0_0 + 4 * tidy + 3][j_0_0 + 4 * tidx + 3] * s_filt[i_0_0][j_0_0];
// CHECK-NEXT: }
// CHECK-NEXT: }
