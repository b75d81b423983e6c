// while-to-for: a while loop with a counter initialised just before it and stepped at the end
// of its body is a for loop (then loop-iterators declares k in it, and sink-declarations
// declares the C89 `int i` where it gets its thread id): the row walk is coalesced. A while
// loop whose body also steps k elsewhere (before a continue) stays, saying why. A counter
// declared with its initial value just before the loop (`int k = 0;`) is the loop's too, also
// where statements that do not mention k stand between (CUDA by Example's grid-stride
// histogram: `int i = ...; int offset = blockDim.x * gridDim.x; while (i < size)`); one that
// reads k in between keeps the loop.
// RUN: %naiveopt %s --explain -o %t.cu 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: %naiveopt %s --no-opt --no-verify | FileCheck %s

#pragma naiveopt sizes(N=203, M=67) array(A, N, M) array(x, M) array(y, N)
__global__ void mv_while(const float *A, const float *x, float *y, int N, int M)
{
    int i, k;
    float acc;

    i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N)
    {
        acc = 0;
        k = 0;
        while (k < M)
        {
            acc += A[i * M + k] * x[k];
            k += 1;
        }
        y[i] = acc;
    }
}

__global__ void mv_while_continue(const float *A, const float *x, float *y, int N, int M)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N)
    {
        float acc = 0;
        int k = 0;
        while (k < M)
        {
            if (x[k] < 0.0f) {
                k++;
                continue;
            }
            acc += A[i * M + k] * x[k];
            k++;
        }
        y[i] = acc;
    }
}

__global__ void mv_while_declared(const float *A, const float *x, float *y, int N, int M)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N)
    {
        float acc = 0;
        int k = 0;
        while (M > k)
        {
            acc += A[i * M + k] * x[k];
            ++k;
        }
        y[i] = acc;
    }
}

__global__ void sum_while_apart(const float *A, float *y, int N, int M)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N)
    {
        int k = 0;
        float acc = 0.0f;
        int width = M;
        while (k < width)
        {
            acc += A[i * M + k];
            k++;
        }
        y[i] = acc;
    }
}

__global__ void sum_while_read_between(const float *A, float *y, int N, int M)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N)
    {
        int k = 0;
        float acc = A[i * M + k];
        while (k < M)
        {
            acc += A[i * M + k];
            k++;
        }
        y[i] = acc;
    }
}

// REMARK: mv_while: remark [while-to-for] applied: 1 while loop(s) with a counter written as for loops: while (k < M) -> for (k = 0; k < M; k += 1)
// REMARK: mv_while_continue: remark [while-to-for] missed: while (k < M) kept: its body assigns k before the step
// REMARK: mv_while_declared: remark [while-to-for] applied: 1 while loop(s) with a counter written as for loops: while (M > k) -> for (k = 0; M > k; ++k)
// REMARK: sum_while_apart: remark [while-to-for] applied: 1 while loop(s) with a counter written as for loops: while (k < width) -> for (k = 0; k < width; k++)
// REMARK: sum_while_read_between: remark [while-to-for] missed: while (k < M) kept: the statement before it does not initialise k
// REMARK: mv_while: remark [loop-iterators] applied: 1 loop(s) declare their iterator: for (int k = 0; ...)
// REMARK: mv_while: remark [sink-declarations] applied: 1 local(s) declared where first assigned: int i = idx
// REMARK: mv_while: remark [thread-space] analysis: thread space from bounds guard: (N, 1)
// REMARK: mv_while: remark [coalesce] applied:
// REMARK: mv_while: verification passed
// REMARK: mv_while_continue: verification passed
// REMARK: mv_while_declared: verification passed
// REMARK: sum_while_apart: verification passed
// REMARK: sum_while_read_between: verification passed

// CHECK-LABEL: __global__ void mv_while(
// CHECK-NEXT: const int idx = blockIdx.x * blockDim.x + threadIdx.x;
// CHECK-NEXT: float acc;
// CHECK-NEXT: int i = idx;
// CHECK: acc = 0;
// CHECK-NEXT: for (int k = 0; k < M; k += 1) {
// CHECK-NEXT: acc += A[i * M + k] * x[k];
// CHECK-NEXT: }
// CHECK-LABEL: __global__ void mv_while_continue(
// CHECK: while (k < M) {
// CHECK-LABEL: __global__ void mv_while_declared(
// CHECK-NOT: int k;
// CHECK: for (int k = 0; M > k; ++k) {
