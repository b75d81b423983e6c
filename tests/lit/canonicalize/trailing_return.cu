// merge-guards: Rodinia's k-means ends its kernels with a `return;` after the guard; it does
// nothing, and removed, the guard is the kernel's last statement again, so coalesce stages
// the row each thread reads (before: "the loop is not at the top level of the kernel or its
// guard").
// RUN: %naiveopt %s --explain -o %t.cu 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: %naiveopt %s --no-opt --no-verify | FileCheck %s

__global__ void invert_mapping(float *input, float *output, int npoints, int nfeatures)
{
    int point_id = threadIdx.x + blockDim.x * blockIdx.x;
    int i;

    if (point_id < npoints) {
        for (i = 0; i < nfeatures; i++)
            output[point_id + npoints * i] = input[point_id * nfeatures + i];
        return;
    }
    return;
}

// An early return followed by a block of its own: the block is the kernel's statements, so the
// matrix product's loop is at the top level of its guard and the block is merged.
__global__ void blocked(const float *A, const float *B, float *C, int M, int N, int K)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= M || col >= N) return;
    {
        float sum = 0.0f;
        for (int k = 0; k < K; k++)
            sum += A[row * K + k] * B[k * N + col];
        C[row * N + col] = sum;
    }
}

// REMARK: invert_mapping: remark [merge-guards] applied: the return; ending the kernel removed; the return; ending the guard's body removed
// REMARK: blocked: remark [merge-guards] applied: a block of its own made the kernel's statements
// REMARK: invert_mapping: remark [coalesce] applied: staged in shared memory: input(idx, i)
// REMARK: blocked: remark [thread-block-merge] applied:
// REMARK: invert_mapping: verification passed: {{.*}}inferred-odd
// REMARK: blocked: verification passed

// CHECK-LABEL: __global__ void invert_mapping(
// CHECK: output[point_id + npoints * i] = input[point_id * nfeatures + i];
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NOT: return;
// CHECK-LABEL: __global__ void blocked(
// CHECK: if (row >= M || col >= N) {
// CHECK-NEXT: return;
// CHECK-NEXT: }
// CHECK-NEXT: float sum = 0.0f;
