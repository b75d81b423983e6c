// vectorize on AMD (gfx90a): each thread computes 4 neighbouring outputs, reading a and b
// and writing c with one 128-bit access each (vload4/vstore4), with a scalar path for the
// last outputs when n is not a multiple of 4; the launch has a quarter of the threads. On
// NVIDIA (sm_90) the cost model decides: at the 4096 elements it assumes, the vector form is
// no faster, so the pass declines, saying so (vectorize_streaming.cu has a map the model
// vectorizes).
// RUN: %naiveopt %s --passes=vectorize --arch gfx90a --target opencl --explain -o %t.cl 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: FileCheck %s < %t.cl
// RUN: %naiveopt %s --passes=vectorize --arch sm_90 --explain -o %t.cu 2>&1 | FileCheck %s --check-prefix=NVIDIA

#pragma naiveopt sizes(n=1001) array(a, n) array(b, n) array(c, n)
__global__ void add(const float *a, const float *b, float *c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        c[i] = a[i] + 2.0f * b[i];
}

// REMARK: add: remark [vectorize] applied: each thread computes 4 neighbouring outputs in x: a[idx] read as float4, b[idx] read as float4, c[idx] written as float4; scalar path when an output is out of bounds
// REMARK: add: verification passed

// CHECK: // add: passes: vectorize
// CHECK-NEXT: //   local size:  (256, 1)
// CHECK-NEXT: //   global size: ((n + 1023) / 1024 * 256, 1)
// CHECK: int i_0 = 4 * idx;
// CHECK: int i_3 = 4 * idx + 3;
// CHECK-NEXT: if (i_0 < n && i_1 < n && i_2 < n && i_3 < n) {
// CHECK-NEXT: float4 v_a = vload4(0, &a[4 * idx]);
// CHECK-NEXT: float4 v_b = vload4(0, &b[4 * idx]);
// CHECK: o_c.x = v_a.x + 2.0f * v_b.x;
// CHECK: o_c.w = v_a.w + 2.0f * v_b.w;
// CHECK: vstore4(o_c, 0, &c[4 * idx]);
// CHECK-NEXT: } else {
// CHECK-NEXT: if (i_0 < n) {
// CHECK-NEXT: c[i_0] = a[i_0] + 2.0f * b[i_0];

// NVIDIA: add: remark [vectorize] analysis: scalar accesses as written chosen: estimated
// NVIDIA: add: remark [vectorize] analysis: float4 accesses, block 256x1: {{.*}} not chosen: estimated {{.*}} as fast as the chosen variant within 5%
// NVIDIA: add: remark [vectorize] missed: across threads: the cost model estimates no gain from vector accesses
// NVIDIA-NEXT: add: remark [vectorize] missed: no access to vectorize
// NVIDIA: add: verification passed
