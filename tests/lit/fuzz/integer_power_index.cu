// Vectorize wrote the index of a read shared by 4 outputs, (M - 1 - j) * M + j, expanded by
// sympy and printed by ccode as pow(M, 2) - M*idy - M + idy: a floating-point call, and an
// ambiguous one in OpenCL C on ints (the output did not build). Integer powers are products
// now (ir/build.py). Found by python -m naiveopt.fuzz --seed 4242 (case 79), reduced.
// RUN: %naiveopt %s --target opencl --disable-pass=register-promotion --require-verified --explain -o %t.cl 2>&1 | FileCheck %s
// RUN: FileCheck %s --check-prefix=CODE < %t.cl
#pragma naiveopt sizes(N=64, M=65, L=47) block(8, 8) array(A, (M + 1), M) array(B, M, N)
__global__ void k0(float *A, float *B, int N, int M, int L)
{
    int i = blockDim.x * blockIdx.x + threadIdx.x;
    int j = threadIdx.y + blockIdx.y * blockDim.y;
    if (i < N && j < M) {
        float acc = A[(M - 1 - j) * M + j];
        for (int k = 0; k < L; k++)
            acc += A[(j + 1) * M + j];
        B[j * N + i] = acc;
    }
}

// CHECK: k0: remark [vectorize] applied
// CHECK: k0: verification passed
// CODE-NOT: pow(
// CODE: float s_A = A[M * M - M * idy - M + idy];
