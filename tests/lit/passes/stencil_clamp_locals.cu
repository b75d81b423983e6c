// stencil with clamp-to-edge taps through locals (int xx = min(max(x + dx, 0), W - 1)): the
// window holds the elements at the clamped coordinates (its load applies the same clamps, the
// user's bounds), and the taps read it at their unclamped offsets.
// RUN: %naiveopt %s --merge 1:1 --explain -o %t.cu 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: FileCheck %s < %t.cu
// RUN: %naiveopt %s --merge 1:1 --target opencl --explain -o %t.cl 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: FileCheck %s --check-prefix=CL < %t.cl

#pragma naiveopt sizes(W=75, H=37) block(16, 16) array(in, H, W) array(out, H, W)
__global__ void blur(const float *in, float *out, int W, int H)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < W && y < H) {
        float sum = 0.0f;
        for (int dy = -1; dy <= 1; dy++) {
            for (int dx = -2; dx <= 2; dx++) {
                int xx = min(max(x + dx, 0), W - 1);
                int yy = min(max(y + dy, 0), H - 1);
                sum += in[yy * W + xx];
            }
        }
        out[y * W + x] = sum / 15.0f;
    }
}

// REMARK: blur: remark [stencil] applied: staged in shared memory once per block: in(clamp(idy + [-1, 1], 0, H - 1), clamp(idx + [-2, 2], 0, W - 1)) -> s_in
// REMARK: blur: verification passed

// CHECK: // blur: passes: stencil
// CHECK: __shared__ float s_in[{{[0-9]+}}][{{[0-9]+}}];
// CHECK: s_in[r][c] = ({{[0-9]+}} * bidy + r - 1 < H + 1 && {{[0-9]+}} * bidx + c - 2 < W + 2)
// CHECK-NEXT: ? (in[min(max({{[0-9]+}} * bidy + r - 1, 0), H - 1) * W +
// CHECK-NEXT: min(max({{[0-9]+}} * bidx + c - 2, 0), W - 1)])
// CHECK: __syncthreads();
// CHECK: sum += s_in[dy + tidy + 1][dx + tidx + 2];

// CL: // blur: passes: stencil
// CL: __local float s_in[{{[0-9]+}}][{{[0-9]+}}];
// CL: in[min(max({{[0-9]+}} * bidy + r - 1, 0), H - 1) * W +
// CL-NEXT: min(max({{[0-9]+}} * bidx + c - 2, 0), W - 1)]
// CL: barrier(CLK_LOCAL_MEM_FENCE
// CL: sum += s_in[dy + tidy + 1][dx + tidx + 2];
