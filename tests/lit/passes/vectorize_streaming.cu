// vectorize on NVIDIA, chosen by the cost model: a map with one load per thread, at 2M
// elements (-D, the sizes the model estimates at), keeps too few bytes in flight to reach the
// DRAM bandwidth (latency-bound); each thread of its float4 form reads and writes 16 bytes,
// four times a float row per warp load: DRAM-bound, chosen. The block stays the naive 256
// threads; out-of-bounds lanes take the scalar path. The CUDA helper tests the address at run time and falls back to scalar accesses
// where it is not 16-byte aligned.
// RUN: %naiveopt %s --passes=vectorize --arch sm_90 -D n=2097152 --explain -o %t.cu 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: FileCheck %s < %t.cu

#pragma naiveopt sizes(n=1001) array(x, n) array(y, n)
__global__ void scale(const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = 3.0f * x[i];
}

// REMARK: scale: remark [vectorize] analysis: float4 accesses, block 256x1 chosen: estimated {{.*}}DRAM-bound
// REMARK: scale: remark [vectorize] analysis: scalar accesses as written: block 256x1, {{.*}} not chosen: estimated {{.*}} (latency-bound), slower than
// REMARK: scale: remark [vectorize] applied: each thread computes 4 neighbouring outputs in x: x[idx] read as float4, y[idx] written as float4; scalar path when an output is out of bounds; float4 accesses, block 256x1
// REMARK: scale: verification passed

// CHECK: // scale: passes: vectorize
// CHECK-NEXT: //   launch: scale<<<dim3((n + 1023) / 1024, 1), dim3(256, 1)>>>
// CHECK: int i_0 = 4 * idx;
// CHECK: int i_3 = 4 * idx + 3;
// CHECK-NEXT: if (i_0 < n && i_1 < n && i_2 < n && i_3 < n) {
// CHECK-NEXT: float4 v_x = naiveopt_load_float4(&x[4 * idx]);
// CHECK-NEXT: float4 o_y;
// CHECK: o_y.x = 3.0f * v_x.x;
// CHECK: o_y.w = 3.0f * v_x.w;
// CHECK: naiveopt_store_float4(&y[4 * idx], o_y);
// CHECK-NEXT: } else {
// CHECK-NEXT: if (i_0 < n) {
// CHECK-NEXT: y[i_0] = 3.0f * x[i_0];
