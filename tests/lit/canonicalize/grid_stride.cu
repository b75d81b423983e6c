// grid-stride: a grid-stride loop whose iterations are independent and whose ids serve the
// loop alone becomes one element per thread (a bounds guard), thread space n: saxpy, and a
// row walk (C89 iterator, stride through a local) that coalescing then stages. A thread's
// partial sum over its share carries from one iteration to the next and its id is used
// after the loop: that loop stays, saying why. One element per thread needs a launch of n
// threads, and users launch grid-stride kernels on a fixed grid: saxpy, whose launch no pass
// changes, is written back as the loop (it runs on any launch, as the input did; with
// --no-opt too); row_sums, relaunched by coalesce, keeps the guard, and its launcher and launch
// check give and demand its launch.
// RUN: %naiveopt %s --explain -o %t.cu 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: FileCheck %s < %t.cu
// RUN: %naiveopt %s --no-opt --no-verify | FileCheck %s --check-prefix=CANON

#pragma naiveopt sizes(n=5003, H=301, W=37, T=512)
#pragma naiveopt array(x, n) array(y, n) array(A, H, W) array(v, H) array(partial, T)
__global__ void saxpy(int n, float a, const float *x, float *y)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        y[i] = a * x[i] + y[i];
}

__global__ void row_sums(const float *A, float *v, int H, int W)
{
    int row;
    int stride = gridDim.x * blockDim.x;
    for (row = blockIdx.x * blockDim.x + threadIdx.x; row < H; row += stride) {
        float s = 0.0f;
        for (int j = 0; j < W; j++)
            s += A[row * W + j];
        v[row] = s;
    }
}

__global__ void partial_sums(const float *x, float *partial, int n, int T)
{
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    float s = 0.0f;
    for (int i = tid; i < n; i += blockDim.x * gridDim.x)
        s += x[i];
    if (tid < T)
        partial[tid] = s;
}

// REMARK: saxpy: remark [grid-stride] applied: grid-stride loop over i < n (step blockDimX * gridDimX) made one element per thread (if (i < n)): thread space (n, 1)
// REMARK: row_sums: remark [grid-stride] applied: grid-stride loop over row < H (step stride) made one element per thread (if (row < H)): thread space (H, 1); stride no longer read: declaration removed
// REMARK: partial_sums: remark [grid-stride] missed: grid-stride loop over i < n (step blockDimX * gridDimX) kept: the kernel reads tid outside the loop's header (its work depends on the launch)
// REMARK: row_sums: remark [sink-declarations] applied: 1 local(s) declared where first assigned: int row = idx
// REMARK: row_sums: remark [coalesce] applied:
// REMARK: saxpy: remark [restore-grid-stride] analysis: written back as the grid-stride loop over i (no pass changed the launch): the output runs on any launch, as the input did
// REMARK: saxpy: verification passed
// REMARK: row_sums: verification passed
// REMARK: partial_sums: verification passed

// CHECK: //   launch: saxpy<<<dim3((n + {{[0-9]+}}) / {{[0-9]+}}, 1), dim3({{[0-9]+}}, 1)>>>
// CHECK: // row_sums: passes: coalesce
// CHECK-NEXT: //   launch: row_sums<<<dim3((H + {{[0-9]+}}) / {{[0-9]+}}, 1), dim3({{[0-9]+}}, 1)>>>
// CHECK: //   launch: partial_sums<<<dim3((T + {{[0-9]+}}) / {{[0-9]+}}, 1), dim3({{[0-9]+}}, 1)>>>
// CHECK-LABEL: void saxpy(
// CHECK: for (int i = idx; i < n; i += blockDimX * gridDimX) {
// CHECK-LABEL: row_sums(const float *A
// CHECK: __trap();
// CHECK: const int active = row < H;

// CANON-LABEL: __global__ void saxpy(
// CANON-NEXT: const int idx = blockIdx.x * blockDim.x + threadIdx.x;
// CANON: for (int i = idx; i < n; i += blockDimX * gridDimX) {
// CANON-NEXT: y[i] = a * x[i] + y[i];
// CANON-LABEL: __global__ void row_sums(
// CANON-NOT: stride
// CANON: for (int row = idx; row < H; row += blockDimX * gridDimX) {
// CANON-LABEL: __global__ void partial_sums(
// CANON: for (int i = tid; i < n; i += blockDimX * gridDimX) {
