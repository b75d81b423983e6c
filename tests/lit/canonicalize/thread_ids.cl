// OpenCL spellings of the global ids: get_group_id(0) * get_local_size(0) + get_local_id(0),
// the y id with its operands the other way round, size_t and uint ids; each is the global id
// and the guards give the thread space.
// RUN: %naiveopt %s --explain -o %t.cl 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: FileCheck %s < %t.cl

#pragma naiveopt sizes(n=1001, H=45, W=70) array(a, n) array(b, n) array(A, H, W) array(B, W, H)
__kernel void group_times_size(__global const float *a, __global float *b, int n)
{
    int i = get_group_id(0) * get_local_size(0) + get_local_id(0);
    if (i >= n)
        return;
    b[i] = a[i] * 2.0f;
}

__kernel void size_t_ids(__global const float *A, __global float *B, int H, int W)
{
    size_t x = get_global_id(0);
    uint y = get_local_id(1) + get_local_size(1) * get_group_id(1);
    if (x < W && y < H)
        B[x * H + y] = A[y * W + x];
}

// REMARK: group_times_size: remark [predefined] analysis: thread ids: idx
// REMARK: size_t_ids: remark [predefined] analysis: thread ids: idx, idy
// REMARK: group_times_size: remark [thread-space] analysis: thread space from bounds guard: (n, 1)
// REMARK: size_t_ids: remark [thread-space] analysis: thread space from bounds guard: (W, H)
// REMARK: size_t_ids: remark [coalesce-writes] applied:
// REMARK: group_times_size: verification passed
// REMARK: size_t_ids: verification passed

// CHECK: // group_times_size: passes: vectorize
// CHECK: //   thread space: (n, 1)
// CHECK: // size_t_ids: passes: coalesce-writes
// CHECK: //   thread space: (W, H)
