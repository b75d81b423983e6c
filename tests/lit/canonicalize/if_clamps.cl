// clamp-ifs: a row filter clamps its neighbour's column at the border with if-statements, as
// tutorials write it (C89 locals, no annotations). Read as ternaries, then split one local per
// definition, the index is min/max of the column: verification infers the image's extent and
// passes. With the pass off the index is opaque and the output is written unverified.
// RUN: %naiveopt %s --explain -o %t.cl 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: %naiveopt %s --no-opt --no-verify | FileCheck %s
// RUN: %naiveopt %s --disable-pass=clamp-ifs -o %t.off.cl 2>&1 | FileCheck %s --check-prefix=OFF

__kernel void row_filter(__global const float *src, __global float *dst, int width, int height)
{
    int x, y, k, xx;
    float sum;
    x = get_global_id(0);
    y = get_global_id(1);
    if (x >= width || y >= height)
        return;
    sum = 0.0f;
    for (k = -3; k <= 3; k++) {
        xx = x + k;
        if (xx < 0)
            xx = 0;
        else if (xx > width - 1)
            xx = width - 1;
        sum += src[y * width + xx];
    }
    dst[y * width + x] = sum / 7.0f;
}

// REMARK: row_filter: remark [clamp-ifs] applied: 1 clamp(s) written as if-statements read as ternaries: xx = (xx < 0) ? (0) : ((xx > width - 1) ? (width - 1) : (xx))
// REMARK: row_filter: verification passed: inferred

// CHECK-LABEL: __kernel void row_filter(
// CHECK: int xx = x + k;
// CHECK-NEXT: int xx_2 = (xx < 0) ? (0) : ((xx > width - 1) ? (width - 1) : (xx))
// CHECK-NEXT: sum += src[y * width + xx_2];

// OFF: warning: written unverified: array shape unknown: the index of src[y * width + xx] depends on xx
