// a column filter (the convolutionSeparable sample's naive form) clamped on the row only,
// inline in the subscript: the window's rows are loaded through the row's clamp, its columns
// as they are.
// RUN: %naiveopt %s --merge 1:1 --explain -o %t.cu 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: FileCheck %s < %t.cu
// RUN: %naiveopt %s --merge 1:1 --target opencl --explain -o %t.cl 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: FileCheck %s < %t.cl

#define RADIUS 4
__constant__ float taps[2 * RADIUS + 1];

#pragma naiveopt sizes(imageW=45, imageH=83) block(16, 16)
#pragma naiveopt array(src, imageH, imageW) array(dst, imageH, imageW)
__global__ void columns(float *dst, const float *src, int imageW, int imageH)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < imageW && y < imageH) {
        float sum = 0.0f;
        for (int k = -RADIUS; k <= RADIUS; k++)
            sum += src[min(max(y + k, 0), imageH - 1) * imageW + x] * taps[RADIUS - k];
        dst[y * imageW + x] = sum;
    }
}

// REMARK: columns: remark [stencil] applied: staged in shared memory once per block: src(clamp(idy + [-RADIUS, RADIUS], 0, imageH - 1), idx + [0, 0]) -> s_src
// REMARK: columns: verification passed

// CHECK: // columns: passes: stencil
// CHECK: s_src[r][c] =
// CHECK-NEXT: (-RADIUS + 16 * bidy + r < RADIUS + imageH && {{16|32}} * bidx + c < imageW)
// CHECK-NEXT: ? (src[min(max(-RADIUS + 16 * bidy + r, 0), imageH - 1) * imageW +
// CHECK-NEXT: {{16|32}} * bidx + c])
// CHECK: sum += s_src[RADIUS + k + tidy][tidx] * taps[RADIUS - k];
