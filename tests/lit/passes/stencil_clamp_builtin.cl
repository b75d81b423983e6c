// OpenCL's clamp() on both coordinates, inline in the subscript: clamp(v, lo, hi) is
// min(max(v, lo), hi) (what the IR holds: CUDA has no clamp), and the window is loaded
// through it.
// RUN: %naiveopt %s --merge 1:1 --explain -o %t.cl 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: FileCheck %s < %t.cl
// RUN: %naiveopt %s --merge 1:1 --target cuda --explain -o %t.cu 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: FileCheck %s --check-prefix=CUDA < %t.cu

#pragma naiveopt sizes(W=75, H=50) block(16, 16) array(in, H, W) array(out, H, W)
__kernel void blur(__global const float *in, __global float *out, int W, int H)
{
    int x = get_global_id(0);
    int y = get_global_id(1);
    if (x < W && y < H) {
        float s = 0.0f;
        for (int dy = -2; dy <= 2; dy++)
            for (int dx = -1; dx <= 1; dx++)
                s += in[clamp(y + dy, 0, H - 1) * W + clamp(x + dx, 0, W - 1)];
        out[y * W + x] = s / 15.0f;
    }
}

// REMARK: blur: remark [stencil] applied: staged in shared memory once per block: in(clamp(idy + [-2, 2], 0, H - 1), clamp(idx + [-1, 1], 0, W - 1)) -> s_in
// REMARK: blur: verification passed

// CHECK: // blur: passes: stencil
// CHECK: in[min(max({{[0-9]+}} * bidy + r - 2, 0), H - 1) * W +
// CHECK-NEXT: min(max({{[0-9]+}} * bidx + c - 1, 0), W - 1)]
// CHECK: s += s_in[dy + tidy + 2][dx + tidx + 1];

// CUDA: // blur: passes: stencil
// CUDA-NOT: clamp(
// CUDA: in[min(max({{[0-9]+}} * bidy + r - 2, 0), H - 1) * W +
// CUDA-NEXT: min(max({{[0-9]+}} * bidx + c - 1, 0), W - 1)]
// CUDA-NOT: clamp(
// CUDA: s += s_in[dy + tidy + 2][dx + tidx + 1];
