// A kernel that reads through data (A[(int)C[i]]) cannot be verified without the shape of A:
// it is written, and its header says why (one line, never split by clang-format), in both
// dialects.
// RUN: %naiveopt %s --no-opt | FileCheck %s
// RUN: %naiveopt %s --no-opt --target opencl | FileCheck %s
// RUN: %naiveopt %s --no-opt --no-verify | FileCheck %s --check-prefix=NOVERIFY

// CHECK: // twice: passes:
// CHECK: //   unverified: array shape unknown: the index of A[(int) C[i]] depends on a value read from an array (data-dependent): add '#pragma naiveopt array(NAME, dims...)'{{$}}
// CHECK-NOT: unverified
// CHECK: void twice(
// NOVERIFY: //   unverified: verification disabled (--no-verify){{$}}
__global__ void twice(const float *A, float *B, const float *C, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        B[i] = 2.0f * A[(int)C[i]];
}
