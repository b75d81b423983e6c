// OpenCL built-ins in CUDA: renamed (native_sin -> __sinf, mad -> fma), written as an
// expression (clamp -> min(max()), mix), or resolved by argument type where CUDA splits an
// overloaded built-in (as_int of a float -> __float_as_int, mul_hi of uint -> __umulhi). A
// built-in CUDA has no form of is a located error for a CUDA target.
// RUN: %naiveopt %s --explain -o %t.cl 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// RUN: %naiveopt %s --target cuda --no-verify | FileCheck %s
#pragma naiveopt sizes(n=200) array(x, n) array(y, n) array(h, n)
__kernel void mathy(__global const float *x, __global float *y, __global uint *h, int n)
{
    int i = get_global_id(0);
    if (i < n) {
        float v = native_sin(x[i]) + clamp(x[i], -0.5f, 0.5f) + mix(x[i], 1.0f, 0.25f);
        y[i] = mad(v, 2.0f, 1.0f) + (float)(as_int(x[i]) & 1);
        h[i] = mul_hi(h[i], 2654435761u) + popcount(h[i]);
    }
}

// EXPLAIN: mathy: verification passed
// CHECK: float v = __sinf(x[i]) + min(max(x[i], -0.5f), 0.5f) + (x[i] + (1.0f - x[i]) * 0.25f);
// CHECK: y[i] = fma(v, 2.0f, 1.0f) + ((float)(__float_as_int(x[i]) & 1));
// CHECK: h[i] = __umulhi(h[i], 2654435761u) + __popc(h[i]);
