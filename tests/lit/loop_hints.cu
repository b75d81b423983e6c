// Tuning-guide CUDA: '#pragma unroll' before a loop is kept (dropped, with a remark, where a
// pass transformed the loop away), reads through __ldg are the reads themselves, and an
// optional array tested against NULL keeps its test (0 in OpenCL C 1.2, which has no NULL).
// RUN: %naiveopt %s --no-opt --no-verify | FileCheck %s
// RUN: %naiveopt %s --target opencl --explain -o %t.cl 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// RUN: FileCheck %s --check-prefix=OPENCL < %t.cl
#pragma naiveopt sizes(rows=130, cols=45) array(A, rows, cols) array(bias, rows) array(y, rows)
__global__ void gemv_bias(const float *__restrict__ A, const float *__restrict__ bias,
                          float *__restrict__ y, int rows, int cols)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        float acc = (bias != NULL) ? __ldg(&bias[r]) : 0.0f;
#pragma unroll 4
        for (int c = 0; c < cols; ++c)
            acc += __ldg(A + r * cols + c);
        y[r] = acc;
    }
}

// CHECK: float acc = (bias != NULL) ? (bias[r]) : (0.0f);
// CHECK-NEXT: #pragma unroll 4
// CHECK-NEXT: for (int c = 0; c < cols; ++c) {
// CHECK-NEXT: acc += A[r * cols + c];
// EXPLAIN: gemv_bias: verification passed
// OPENCL: acc = (bias != 0) ? (bias[r]) : (0.0f);
