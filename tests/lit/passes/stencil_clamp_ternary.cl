// Sobel with its neighbours clamped by ternaries and one-sided min/max (xm = x > 0 ? x - 1 :
// 0, xp = min(x + 1, W - 1)) beside the unclamped centre: every tap equals clamp(x + d, 0,
// W - 1) for the threads the guard keeps (x < W), so one window, loaded through that clamp,
// serves them all.
// RUN: %naiveopt %s --merge 1:1 --explain -o %t.cl 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: FileCheck %s < %t.cl

#pragma naiveopt sizes(W=75, H=50) block(16, 16) array(in, H, W) array(out, H, W)
__kernel void sobel(__global const float *in, __global float *out, int W, int H)
{
    int x = get_global_id(0);
    int y = get_global_id(1);
    if (x < W && y < H) {
        int xm = x > 0 ? x - 1 : 0, xp = min(x + 1, W - 1);
        int ym = y - 1 < 0 ? 0 : y - 1, yp = y < H - 1 ? y + 1 : H - 1;
        float gx = -in[ym * W + xm] + in[ym * W + xp]
                   - 2.0f * in[y * W + xm] + 2.0f * in[y * W + xp]
                   - in[yp * W + xm] + in[yp * W + xp];
        float gy = -in[ym * W + xm] - 2.0f * in[ym * W + x] - in[ym * W + xp]
                   + in[yp * W + xm] + 2.0f * in[yp * W + x] + in[yp * W + xp];
        out[y * W + x] = sqrt(gx * gx + gy * gy);
    }
}

// REMARK: sobel: remark [stencil] applied: staged in shared memory once per block: in(clamp(idy + [-1, 1], 0, H - 1), clamp(idx + [-1, 1], 0, W - 1)) -> s_in
// REMARK: sobel: verification passed

// CHECK: // sobel: passes: stencil
// CHECK: in[min(max({{[0-9]+}} * bidy + r - 1, 0), H - 1) * W +
// CHECK-NEXT: min(max({{[0-9]+}} * bidx + c - 1, 0), W - 1)]
// CHECK: float gx = -s_in[tidy][tidx] + s_in[tidy][tidx + 2] - 2.0f * s_in[tidy + 1][tidx] +
