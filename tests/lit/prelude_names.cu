// What nvcc accepts without declarations in the kernel file: <stdint.h>/<stddef.h> types,
// the constants of <math.h>/<float.h>, the CUDA headers (read as empty files, their names
// declared by the prelude). The output keeps every name; a CUDA output keeps the includes,
// in their order, and adds those of the names it keeps (FLT_MAX: <float.h>).
// RUN: %naiveopt %s -o %t.cu --explain 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// RUN: FileCheck %s < %t.cu
// RUN: %naiveopt %s --target opencl --no-verify | FileCheck %s --check-prefix=OPENCL
#include <cuda_runtime.h>
#include <stdint.h>
#include <math.h>

#pragma naiveopt sizes(n=301) array(x, n) array(y, n) array(idx, n)
__global__ void clampmax(const float *x, float *y, const int64_t *idx, size_t n)
{
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float m = -INFINITY;
        uint32_t k = (uint32_t)(idx[i] & 7);
        m = fmaxf(m, x[i] * (float)M_PI) + (float)k;
        y[i] = fminf(m, FLT_MAX);
    }
}

// EXPLAIN-NOT: warning
// EXPLAIN: clampmax: verification passed
// CHECK: #include <cuda_runtime.h>
// CHECK-NEXT: #include <stdint.h>
// CHECK-NEXT: #include <math.h>
// CHECK-NEXT: #include <float.h>
// CHECK-NEXT: #include <stddef.h>
// CHECK: __global__ void clampmax(const float *x, float *y, const int64_t *idx, size_t n) {
// CHECK: size_t i = idx_1;
// CHECK: float m = -INFINITY;
// CHECK: uint32_t k = (uint32_t)(idx[i] & 7);
// CHECK: fmaxf(m, x[i] * ((float)M_PI)) + ((float)k);
// CHECK: y[i] = fminf(m, FLT_MAX);

// OPENCL-NOT: #include
// OPENCL: __kernel void clampmax(__global const float *x, __global float *y, __global const long *idx,
// OPENCL-NEXT: unsigned long n) {
// OPENCL: float m = -INFINITY;
// OPENCL: uint k = (uint)(idx[i] & 7);
// OPENCL: y[i] = fmin(m, FLT_MAX);
