// An OpenCL kernel with a typedef'd element type for a scalar argument (once refused as
// '__private DATA_TYPE') and uint sizes: resolved for the analyses, kept in the output.
// RUN: %naiveopt %s --explain -o %t.cl 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// RUN: FileCheck %s < %t.cl
// RUN: %naiveopt %s --target cuda --no-verify | FileCheck %s --check-prefix=CUDA
typedef float DATA_TYPE;

#pragma naiveopt sizes(n=99) array(x, n) array(y, n) scalar(alpha, 2.5)
__kernel void axpy(__global const DATA_TYPE *x, __global DATA_TYPE *y, DATA_TYPE alpha, uint n)
{
    uint i = get_global_id(0);
    if (i < n)
        y[i] = alpha * x[i] + y[i];
}

// EXPLAIN: axpy: verification passed
// CHECK: typedef float DATA_TYPE;
// CHECK: __kernel void axpy(__global const DATA_TYPE *x, __global DATA_TYPE *y, DATA_TYPE alpha,
// CHECK-NEXT: unsigned int n) {
// CUDA: typedef float DATA_TYPE;
// CUDA: __global__ void axpy(const DATA_TYPE *x, DATA_TYPE *y, DATA_TYPE alpha, unsigned int n) {
