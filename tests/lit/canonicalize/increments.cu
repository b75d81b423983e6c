// The loop steps kernels are written with: `++j`, `j += 1`, `j = 1 + j`, a #define'd step
// (`j += ONE`), with C89 iterators (loop-iterators moves them into the loop). Each row walk
// is canonical and coalesced; `j = j + TWO` is a canonical step of 2, which coalescing does
// not tile (it needs step 1).
// RUN: %naiveopt %s --explain -o %t.cu 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: FileCheck %s < %t.cu

#define ONE 1
#define TWO 2
#pragma naiveopt sizes(H=67, W=45) array(A, H, W) array(x, W) array(y, H)
__global__ void pre_increment(const float *A, const float *x, float *y, int H, int W)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < H) {
        float sum = 0.0f;
        int j;
        for (j = 0; j < W; ++j)
            sum += A[i * W + j] * x[j];
        y[i] = sum;
    }
}

__global__ void plus_one(const float *A, const float *x, float *y, int H, int W)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < H) {
        float sum = 0.0f;
        int j;
        for (j = 0; j < W; j += 1)
            sum += A[i * W + j] * x[j];
        y[i] = sum;
    }
}

__global__ void assign_plus_one(const float *A, const float *x, float *y, int H, int W)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < H) {
        float sum = 0.0f;
        int j;
        for (j = 0; j < W; j = 1 + j)
            sum += A[i * W + j] * x[j];
        y[i] = sum;
    }
}

__global__ void macro_step(const float *A, const float *x, float *y, int H, int W)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < H) {
        float sum = 0.0f;
        for (int j = 0; j < W; j += ONE)
            sum += A[i * W + j] * x[j];
        y[i] = sum;
    }
}

__global__ void step_two(const float *A, const float *x, float *y, int H, int W)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < H) {
        float sum = 0.0f;
        int j;
        for (j = 0; j < W; j = j + TWO)
            sum += A[i * W + j] * x[j];
        y[i] = sum;
    }
}

// REMARK: step_two: remark [loop-iterators] applied: 1 loop(s) declare their iterator: for (int j = 0; ...)
// REMARK: macro_step: remark [loops] analysis: 1 loop(s), 1 canonical
// REMARK: step_two: remark [loops] analysis: 1 loop(s), 1 canonical
// REMARK: pre_increment: remark [coalesce] applied:
// REMARK: plus_one: remark [coalesce] applied:
// REMARK: assign_plus_one: remark [coalesce] applied:
// REMARK: macro_step: remark [coalesce] applied:
// REMARK: step_two: remark [coalesce] missed:
// REMARK: pre_increment: verification passed
// REMARK: plus_one: verification passed
// REMARK: assign_plus_one: verification passed
// REMARK: macro_step: verification passed
// REMARK: step_two: verification passed

// CHECK: // pre_increment: passes: coalesce
// CHECK: // plus_one: passes: coalesce
// CHECK: // assign_plus_one: passes: coalesce
// CHECK: // macro_step: passes: coalesce
// CHECK-LABEL: __global__ void step_two(
// CHECK: for (int j = 0; j < W; j = j + TWO) {
