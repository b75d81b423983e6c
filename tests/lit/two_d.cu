// A 2-D kernel: the thread space comes from the guard, ids in x and y.
// RUN: %naiveopt %s --no-opt --target opencl | FileCheck %s

#pragma naiveopt sizes(W=40, H=24) block(16, 16) array(in, H, W) array(out, H, W)
__global__ void blur_x(const float *in, float *out, int W, int H)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < W && y < H) {
        float left = x > 0 ? in[y * W + x - 1] : 0.0f;
        out[y * W + x] = 0.5f * (left + in[y * W + x]);
    }
}

// CHECK: //   local size:  (16, 16)
// CHECK-NEXT: //   global size: ((W + 15) / 16 * 16, (H + 15) / 16 * 16)
// CHECK-NEXT: //   thread space: (W, H)
// CHECK: __kernel void blur_x(__global const float *in, __global float *out, int W, int H) {
// CHECK-NEXT: const int idx = get_global_id(0);
// CHECK-NEXT: const int idy = get_global_id(1);
// CHECK-NEXT: int x = idx;
// CHECK-NEXT: int y = idy;
// CHECK-NEXT: if (x < W && y < H) {
// CHECK: out[y * W + x] = 0.5f * (left + in[y * W + x]);
// CHECK-NOT: blockIdx
