// A kernel without sizes cannot be verified: it is written, and its header says why (one
// line, never split by clang-format), in both dialects.
// RUN: %naiveopt %s --no-opt | FileCheck %s
// RUN: %naiveopt %s --no-opt --target opencl | FileCheck %s
// RUN: %naiveopt %s --no-opt --no-verify | FileCheck %s --check-prefix=NOVERIFY

// CHECK: // twice: passes:
// CHECK: //   unverified: problem sizes unknown: give metadata, -D NAME=VALUE or '#pragma naiveopt sizes(...)'{{$}}
// CHECK-NOT: unverified
// CHECK: void twice(
// NOVERIFY: //   unverified: verification disabled (--no-verify){{$}}
__global__ void twice(const float *A, float *B, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        B[i] = 2.0f * A[i];
}
