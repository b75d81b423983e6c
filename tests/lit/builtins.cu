// The CUDA math library and its intrinsics in OpenCL: renamed (expf -> exp, __expf ->
// native_exp, __float2int_rn -> convert_int_rte) or written as an expression where OpenCL has
// no such function (__saturatef -> clamp, __fadd_rn -> +, __popc -> popcount).
// RUN: %naiveopt %s --target opencl --explain -o %t.cl 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// RUN: FileCheck %s < %t.cl
#pragma naiveopt sizes(n=200) array(x, n) array(y, n) array(bits, n)
__global__ void mathy(const float *x, float *y, unsigned int *bits, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = __saturatef(x[i]) + __expf(x[i]) + rsqrtf(2.0f + x[i]) + __fdividef(x[i], 3.0f);
        v = __fadd_rn(v, __fmul_rn(x[i], 0.5f)) + fmaxf(v, 0.25) + expf(-fabsf(x[i]));
        y[i] = v + (float)__float2int_rn(4.0f * x[i]);
        bits[i] = __popc(bits[i]) + __clz((int)bits[i]);
    }
}

// EXPLAIN: mathy: verification passed
// CHECK: float v = clamp(x[i], 0.0f, 1.0f) + native_exp(x[i]) + rsqrt(2.0f + x[i]) +
// CHECK-NEXT: native_divide(x[i], 3.0f);
// CHECK: v = v + x[i] * 0.5f + fmax(v, (float)0.25) + exp(-fabs(x[i]));
// CHECK: y[i] = v + ((float)convert_int_rte(4.0f * x[i]));
// CHECK: bits[i] = ((int)popcount(bits[i])) + clz((int)bits[i]);
