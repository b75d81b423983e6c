// bounds guard: the CUDA samples' naive matrixMul has no bounds guard (its sizes are
// multiples of BLOCK_SIZE). Thread merge's blocks overhang such a thread space, so the output
// gains the guard the input lacks: each merged copy tests idx < wB and idy < hA, hA (known to
// the launch only) becomes a parameter after the kernel's own (naiveopt_hA: a build may
// define hA as a macro), and the launcher passes it. A
// stale launch with the naive five arguments no longer compiles.
// RUN: %naiveopt %s --explain -o %t.cu 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: FileCheck %s < %t.cu
// RUN: %naiveopt %s --target opencl -o %t.cl 2>&1
// RUN: FileCheck %s --check-prefix=OCL < %t.cl

#define BLOCK_SIZE 16
#pragma naiveopt sizes(wA=37, wB=48, hA=80) threads(wB, hA)
#pragma naiveopt array(A, hA, wA) array(B, wA, wB) array(C, hA, wB)
__global__ void matrixMulNaive(float *C, float *A, float *B, int wA, int wB)
{
    int row = blockIdx.y * BLOCK_SIZE + threadIdx.y;
    int col = blockIdx.x * BLOCK_SIZE + threadIdx.x;
    float Csub = 0;
    for (int k = 0; k < wA; ++k)
        Csub += A[row * wA + k] * B[k * wB + col];
    C[row * wB + col] = Csub;
}

// REMARK: matrixMulNaive: remark [thread-merge] applied: the kernel has no bounds guard and its blocks now cover {{[0-9]+}}x{{[0-9]+}} outputs, which its thread space need not be a multiple of: guarded by its thread space (wB, hA); new parameter(s) int naiveopt_hA (hA), which the launcher passes
// REMARK: matrixMulNaive: verification passed

// CHECK: //   int naiveopt_hA: new parameter, hA:
// CHECK-NEXT: //     the thread-space size its added bounds guard tests
// CHECK: matrixMulNaive(float *C, float *A, float *B, int wA, int wB, int naiveopt_hA) {
// CHECK: const int active_0_0 = {{.*}} < wB && {{.*}} < naiveopt_hA;
// CHECK: static inline cudaError_t matrixMulNaive_launch(float *C, float *A, float *B,
// CHECK-NEXT: int wA, int wB, int naiveopt_hA,
// CHECK: matrixMulNaive<<<grid, block, 0, stream>>>(C, A, B, wA, wB, naiveopt_hA);

// OCL: //   argument 5: int naiveopt_hA: new parameter, hA:
// OCL-NEXT: //     the thread-space size its added bounds guard tests
// OCL: matrixMulNaive(__global float *C, __global float *A, __global float *B, int wA, int wB,
// OCL-NEXT: int naiveopt_hA) {
