// A helper function next to the kernel: OpenCL to CUDA makes it a __device__ function.
// RUN: %naiveopt %s --no-opt --target cuda | FileCheck %s
// RUN: %naiveopt %s --no-opt --target opencl | FileCheck %s --check-prefix=OCL

float clamp01(float v)
{
    return v < 0.0f ? 0.0f : (v > 1.0f ? 1.0f : v);
}

#pragma naiveopt sizes(n=77) threads(n) array(A, n) array(B, n)
__kernel void saturate(__global const float *A, __global float *B, int n)
{
    int i = get_global_id(0);
    if (i < n)
        B[i] = clamp01(A[i] * 2.0f);
}

// CHECK: __device__ float clamp01(float v) {
// CHECK-NEXT: return (v < 0.0f) ? (0.0f) : ((v > 1.0f) ? (1.0f) : (v));
// CHECK: __global__ void saturate(const float *A, float *B, int n) {
// CHECK: B[i] = clamp01(A[i] * 2.0f);

// OCL-NOT: __device__
// OCL: float clamp01(float v) {
// OCL: __kernel void saturate(__global const float *A, __global float *B, int n) {
// OCL-NEXT: const int idx = get_global_id(0);
