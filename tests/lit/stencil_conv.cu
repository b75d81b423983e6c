// A K x K convolution with a runtime K: the stencil pass stages the block's 16x16 window of
// input (plus K - 1 rows and columns) and the filter in shared memory once, behind one
// barrier, for filters up to 17x17; larger filters run the original body.
// RUN: %naiveopt %s --merge 1:1 | FileCheck %s
// RUN: %naiveopt %s --merge 1:1 --target opencl | FileCheck %s --check-prefix=CL

#pragma naiveopt sizes(H=40, W=37, K=5) threads(W, H)
#pragma naiveopt array(input, H+K-1, W+K-1) array(filt, K, K) array(output, H, W)
__global__ void conv(const float *input, const float *filt, float *output, int H, int W, int K)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (y < H && x < W) {
        float sum = 0.0f;
        for (int i = 0; i < K; i++)
            for (int j = 0; j < K; j++)
                sum += input[(y + i) * (W + K - 1) + (x + j)] * filt[i * K + j];
        output[y * W + x] = sum;
    }
}

// CHECK: // conv: passes: stencil
// CHECK: __shared__ float s_input[{{[0-9]+}}][{{[0-9]+}}];
// CHECK-NEXT: __shared__ float s_filt[17][17];
// CHECK: const int active = y < H && x < W;
// CHECK-NEXT: if (K - 1 <= 16) {
// CHECK: s_input[r][c] = ({{.*}} < H + K - 1 && {{.*}} < K + W - 1)
// CHECK-NEXT: ? (input[{{.*}}])
// CHECK-NEXT: : (0);
// CHECK: s_filt[r_1][c_1] = filt[K * r_1 + c_1];
// CHECK: __syncthreads();
// CHECK: if (active) {
// CHECK: sum += s_input[i + tidy][j + tidx] * s_filt[i][j];
// CHECK: } else {
// CHECK-NEXT: if (active) {
// CHECK: sum += input[(y + i) * (W + K - 1) + (x + j)] *
// CHECK-NOT: __syncthreads

// CL: __local float s_input[{{[0-9]+}}][{{[0-9]+}}];
// CL: barrier(CLK_LOCAL_MEM_FENCE
// CL: sum += s_input[i + tidy][j + tidx] * s_filt[i][j];
