// register-promotion: y[i] is the same element in every iteration of the loop over j, so it
// lives in a register: one load before the loop (guarded by its trip condition, since nothing
// before the loop touches y[i]), one store after it, none per iteration. In the second kernel
// the update is conditional: the pass declines, saying so.
// RUN: %naiveopt %s --passes=register-promotion --explain -o %t.cu 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: FileCheck %s < %t.cu

#pragma naiveopt sizes(N=45, M=67) array(A, N, M) array(x, M) array(y, N)
__global__ void accumulate(const float *A, const float *x, float *y, int N, int M)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) {
        for (int j = 0; j < M; j++)
            y[i] += A[i * M + j] * x[j];
    }
}

#pragma naiveopt sizes(N=45, M=67) array(A, N, M) array(y, N)
__global__ void positives(const float *A, float *y, int N, int M)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) {
        for (int j = 0; j < M; j++)
            if (A[i * M + j] > 0.0f)
                y[i] += A[i * M + j];
    }
}

// REMARK: accumulate: remark [register-promotion] applied: y[idx]: the same element in every iteration of loop j: kept in register r_y
// REMARK: positives: remark [register-promotion] missed: y[idx] in loop j: not promoted: an access is conditional or in a nested loop
// REMARK: accumulate: verification passed
// REMARK: positives: verification passed

// CHECK: // accumulate: passes: register-promotion
// CHECK: // positives: passes: none
// CHECK: __global__ void accumulate(
// CHECK: if (i < N) {
// CHECK-NEXT: float r_y = 0;
// CHECK-NEXT: if (0 < M) {
// CHECK-NEXT: r_y = y[i];
// CHECK-NEXT: }
// CHECK-NEXT: for (int j = 0; j < M; j++) {
// CHECK-NEXT: r_y += A[i * M + j] * x[j];
// CHECK-NEXT: }
// CHECK-EMPTY:
// CHECK-NEXT: if (0 < M) {
// CHECK-NEXT: y[i] = r_y;
// CHECK: __global__ void positives(
// CHECK-NOT: r_y
// CHECK: y[i] += A[i * M + j];
