// delinearize: a 1-D matrix product over the flattened (M, N) space, as ML code writes one
// thread per element (row = idx / N, col = idx % N under idx < M * N), is read as the 2-D
// kernel over (N, M): the tiling passes stage it, and the output divides no thread id.
// Where no pass changes the launch (--no-opt) the 1-D kernel is written back as it was.
// RUN: %naiveopt %s --explain -o %t.cu 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: FileCheck %s < %t.cu
// RUN: %naiveopt %s --no-opt --no-verify --explain 2>&1 | FileCheck %s --check-prefix=NAIVE

__global__ void matmul(const float *A, const float *B, float *C, int M, int N, int K)
{
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < M * N) {
        int row = idx / N;
        int col = idx % N;
        float sum = 0.0f;
        for (int k = 0; k < K; k++)
            sum += A[row * K + k] * B[k * N + col];
        C[idx] = sum;
    }
}

// REMARK: matmul: remark [delinearize] analysis: the 1-D thread space (M * N) read as M rows of N threads: the id / N is idy, the id % N is idx, idx no longer declared
// REMARK: matmul: remark [thread-block-merge] applied: merged blocks
// REMARK: matmul: remark [thread-merge] applied:
// REMARK-NOT: restore-delinearized
// REMARK: matmul: verification passed: {{.*}}inferred-odd
// REMARK-NOT: failed internally

// CHECK: // matmul: passes: thread-block-merge, thread-merge
// CHECK-NEXT: //   launch: matmul<<<dim3((N + {{[0-9]+}}) / {{[0-9]+}}, (M + {{[0-9]+}}) / {{[0-9]+}}), dim3({{[0-9]+}}, {{[0-9]+}})>>>
// CHECK-NEXT: //   thread space: (N, M)
// CHECK: matmul(const float *A, const float *B, float *C, int M, int N, int K) {
// CHECK-NOT: / N;
// CHECK-NOT: % N
// CHECK: C[(
// CHECK-SAME: ) * N + (

// NAIVE: matmul: remark [restore-delinearized] analysis: written back as the 1-D kernel (as it was): no pass changed the launch, so the user's launch stays
// NAIVE: //   thread space: (M * N, 1)
// NAIVE: if (idx < M * N) {
// NAIVE-NEXT: int row = idx / N;
// NAIVE-NEXT: int col = idx % N;
