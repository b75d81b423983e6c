// coalesce-writes: the transpose's write out[x * H + y] moves by H between neighbouring
// threads in x. Each block writes its values into a padded shared tile, waits, and writes the
// tile back transposed, so neighbouring threads store neighbouring addresses. On sm_90 the
// cost model takes the 32x32 tile on 32x8 threads, each storing and writing back 4 rows 8
// apart (four loads in flight per thread where one leaves the launch latency-bound); on
// gfx90a, whose 64-wide wavefronts span two tile rows, a square block of one row per thread.
// In scale the write is already coalesced: the pass declines, saying so.
// RUN: %naiveopt %s --passes=coalesce-writes --explain -o %t.cu 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: FileCheck %s < %t.cu
// RUN: %naiveopt %s --passes=coalesce-writes --target opencl --arch gfx90a -o %t.cl
// RUN: FileCheck %s --check-prefix=AMD < %t.cl

#pragma naiveopt sizes(H=37, W=45) array(in, H, W) array(out, W, H) array(copy, H, W)
__global__ void transpose(const float *in, float *out, int H, int W)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < W && y < H)
        out[x * H + y] = in[y * W + x];
}

__global__ void scale(const float *in, float *copy, int H, int W)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < W && y < H)
        copy[y * W + x] = 2.0f * in[y * W + x];
}

// REMARK: transpose: remark [coalesce-writes] analysis: tile 32x32, 4 rows per thread chosen: estimated {{.*}}DRAM-bound
// REMARK: transpose: remark [coalesce-writes] analysis: tile 32x32: block 32x32, {{.*}} not chosen: estimated {{.*}} (latency-bound), slower than
// REMARK: transpose: remark [coalesce-writes] applied: out(idx, idy): uncoalesced write transposed through s_out[32][33], each thread 4 rows 8 apart; tile 32x32, 4 rows per thread: block 32x8
// REMARK: scale: remark [coalesce-writes] missed: no global write moves by a non-unit stride between neighbouring threads
// REMARK: transpose: verification passed
// REMARK: scale: verification passed

// CHECK: // transpose: passes: coalesce-writes
// CHECK-NEXT: //   launch: transpose<<<dim3((W + 31) / 32, (H + 31) / 32), dim3(32, 8)>>>
// CHECK: // scale: passes: none
// CHECK: __global__ void __launch_bounds__(256{{(, [0-9]+)?}})
// CHECK-SAME: transpose(
// CHECK: __shared__ float s_out[32][33];
// CHECK: int y_0 = 32 * bidy + tidy;
// CHECK-NEXT: if (x_0 < W && y_0 < H) {
// CHECK-NEXT: s_out[tidy][tidx] = in[y_0 * W + x_0];
// CHECK: int y_3 = 32 * bidy + tidy + 24;
// CHECK-NEXT: if (x_3 < W && y_3 < H) {
// CHECK-NEXT: s_out[tidy + 24][tidx] = in[y_3 * W + x_3];
// CHECK-NEXT: }
// CHECK-NEXT: __syncthreads();
// CHECK-NEXT: if (32 * bidx + tidy < W && 32 * bidy + tidx < H) {
// CHECK-NEXT: out[(32 * bidx + tidy) * H + (32 * bidy + tidx)] = s_out[tidx][tidy];
// CHECK: if (32 * bidx + tidy + 24 < W && 32 * bidy + tidx < H) {
// CHECK-NEXT: out[(32 * bidx + tidy + 24) * H + (32 * bidy + tidx)] = s_out[tidx][tidy + 24];
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK: __global__ void scale(
// CHECK-NOT: __shared__
// CHECK: copy[y * W + x] = 2.0f * in[y * W + x];

// AMD: //   local size:  (32, 32)
// AMD: reqd_work_group_size(32, 32, 1)
// AMD: __local float s_out[32][33];
// AMD: if (x < W && y < H) {
// AMD-NEXT: s_out[tidy][tidx] = in[y * W + x];
// AMD-NEXT: }
// AMD-NEXT: barrier(
// AMD-NEXT: if (32 * bidx + tidy < W && 32 * bidy + tidx < H) {
// AMD-NEXT: out[(32 * bidx + tidy) * H + (32 * bidy + tidx)] = s_out[tidx][tidy];
