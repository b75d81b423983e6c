// OpenCL with local memory and a barrier to CUDA: work-item functions become CUDA built-ins,
// barrier() becomes __syncthreads() and __local becomes __shared__.
// RUN: %naiveopt %s --no-opt --target cuda -D N=64 | FileCheck %s

#ifndef N
#define N 4096
#endif
#pragma naiveopt sizes(N=64) threads(N) block(64) array(in, N) array(out, N)
__kernel void reverse(__global const float *in, __global float *out)
{
    __local float tile[64];
    int l = get_local_id(0);
    int g = get_global_id(0);
    tile[l] = in[g];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (g < N)
        out[g] = tile[63 - l];
}

// CHECK: //   launch: reverse<<<dim3((N + 63) / 64, 1), dim3(64, 1)>>>
// CHECK: #ifndef N
// CHECK-NEXT: #define N 64
// CHECK-NEXT: #endif
// CHECK: __global__ void reverse(const float *in, float *out) {
// CHECK-NEXT: const int idx = blockIdx.x * blockDim.x + threadIdx.x;
// CHECK-NEXT: const int tidx = threadIdx.x;
// CHECK-NEXT: __shared__ float tile[64];
// CHECK-NEXT: int l = tidx;
// CHECK-NEXT: int g = idx;
// CHECK-NEXT: tile[l] = in[g];
// CHECK-NEXT: __syncthreads();
// CHECK: out[g] = tile[63 - l];
// CHECK-NOT: get_local_id
// CHECK-NOT: barrier
// CHECK-NOT: __local
