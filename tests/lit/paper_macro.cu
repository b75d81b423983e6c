// The paper's macro style: accessor macros and the predefined ids idx/idy used undeclared.
// RUN: %naiveopt %s --no-opt --target opencl -D N=64 | FileCheck %s

#ifndef N
#define N 2048
#endif
#define A(y,x) A[(y)*N+(x)]
#define B(y,x) B[(y)*N+(x)]
#pragma naiveopt sizes(N=64) threads(N, N) block(16, 16) array(A, N, N) array(B, N, N)
__global__ void mtrans(float *A, float *B) {
    B(idx, idy) = A(idy, idx);
}

// CHECK: //   local size:  (16, 16)
// CHECK-NEXT: //   global size: ((N + 15) / 16 * 16, (N + 15) / 16 * 16)
// CHECK-NOT: #define A(
// CHECK: #define N 64
// CHECK: __kernel void mtrans(__global float *A, __global float *B) {
// CHECK-NEXT: const int idx = get_global_id(0);
// CHECK-NEXT: const int idy = get_global_id(1);
// CHECK-NEXT: B[idx * N + idy] = A[idy * N + idx];
// CHECK-NEXT: }
