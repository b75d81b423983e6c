// thread-ids: textbook kernels name the built-ins first (`int tx = threadIdx.x;`) and build
// the global id from the locals, in any operand order and through casts to unsigned; the id
// is the global id, and the locals that only served it go. The thread space is read from
// the guard that follows, an early return with the bound on the left included.
// RUN: %naiveopt %s --explain -o %t.cu 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: %naiveopt %s --no-opt --no-verify | FileCheck %s

#pragma naiveopt sizes(n=1001, H=45, W=70) array(a, n) array(b, n) array(A, H, W) array(B, W, H)
#pragma naiveopt block(16, 16)
__global__ void through_locals(const float *a, float *b, int n)
{
    int tx = threadIdx.x;
    int bx = blockIdx.x;
    int i = bx * blockDim.x + tx;
    if (i < n)
        b[i] = a[i] * 2.0f;
}

__global__ void unsigned_cast(const float *a, float *b, unsigned int n)
{
    unsigned int i = (unsigned int)blockIdx.x * blockDim.x + threadIdx.x;
    if (n <= i)
        return;
    b[i] = a[i] * 0.5f;
}

__global__ void transpose_yx(const float *A, float *B, int H, int W)
{
    int ty = threadIdx.y, tx = threadIdx.x;
    int y = ty + blockDim.y * blockIdx.y;
    int x = (unsigned)blockIdx.x * blockDim.x + tx;
    if (y < H && x < W)
        B[x * H + y] = A[y * W + x];
}

// REMARK: through_locals: remark [thread-ids] applied: 1 global id(s) written through locals: bx * blockDimX + tx -> idx (tx, bx no longer read: declaration removed)
// REMARK: transpose_yx: remark [thread-ids] applied: 2 global id(s) written through locals: ty + blockDimY * bidy -> idy; ((unsigned int) bidx) * blockDimX + tx -> idx (ty, tx no longer read: declaration removed)
// REMARK: through_locals: remark [thread-space] analysis: thread space from bounds guard: (n, 1)
// REMARK: unsigned_cast: remark [thread-space] analysis: thread space from bounds guard: (n, 1)
// REMARK: transpose_yx: remark [thread-space] analysis: thread space from bounds guard: (W, H)
// REMARK: transpose_yx: remark [coalesce-writes] applied:
// REMARK: through_locals: verification passed
// REMARK: unsigned_cast: verification passed
// REMARK: transpose_yx: verification passed

// CHECK-LABEL: __global__ void through_locals(
// CHECK-NEXT: const int idx = blockIdx.x * blockDim.x + threadIdx.x;
// CHECK-NEXT: int i = idx;
// CHECK-LABEL: __global__ void unsigned_cast(
// CHECK: unsigned int i = idx;
// CHECK-LABEL: __global__ void transpose_yx(
// CHECK-NOT: int tx
// CHECK: int y = idy;
// CHECK-NEXT: int x = idx;
