// Vector values in OpenCL: uchar4 pixels with .x/.y/.z, a vector literal, a splat and a
// concatenation, and convert_uchar_sat: CUDA writes make_uchar4/make_float4 and a clamped
// cast (convert_uchar_sat rounds toward zero and saturates; fmaxf also sends NaN to 0).
// RUN: %naiveopt %s --explain -o %t.cl 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// RUN: %naiveopt %s --target cuda --no-verify | FileCheck %s
#pragma naiveopt sizes(width=97, height=33) block(16, 16)
#pragma naiveopt array(rgba, height, width) array(gray, height, width) array(out, height, width)
__kernel void shade(__global const uchar4 *rgba, __global uchar *gray, __global float4 *out,
                    int width, int height)
{
    int x = get_global_id(0);
    int y = get_global_id(1);
    if (x < width && y < height) {
        uchar4 p = rgba[y * width + x];
        float l = 0.299f * p.x + 0.587f * p.y + 0.114f * p.z;
        float2 half2 = (float2)(l, 0.5f * l);
        out[y * width + x] = (float4)(half2, half2) + (float4)(1.0f);
        gray[y * width + x] = convert_uchar_sat(l);
    }
}

// EXPLAIN: shade: verification passed
// CHECK: uchar4 p = rgba[y * width + x];
// CHECK: float2 half2 = make_float2(l, 0.5f * l);
// CHECK: make_float4(half2.x, half2.y, half2.x, half2.y) + make_float4(1.0f, 1.0f, 1.0f, 1.0f);
// CHECK: gray[y * width + x] = (unsigned char)fminf(fmaxf(l, 0.0f), 255.0f);
