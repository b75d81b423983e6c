// coalesce-writes: the transpose's write out[x * H + y] moves by H between neighbouring
// threads in x. Each square block writes its values into a padded shared tile, waits, and
// writes the tile back transposed, so neighbouring threads store neighbouring addresses. In
// scale the write is already coalesced: the pass declines, saying so.
// RUN: %naiveopt %s --passes=coalesce-writes --explain -o %t.cu 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: FileCheck %s < %t.cu

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

// REMARK: transpose: remark [coalesce-writes] applied: out(idx, idy): uncoalesced write transposed through s_out[{{[0-9]+}}][{{[0-9]+}}]
// REMARK: scale: remark [coalesce-writes] missed: no global write moves by a non-unit stride between neighbouring threads
// REMARK: transpose: verification passed
// REMARK: scale: verification passed

// CHECK: // transpose: passes: coalesce-writes
// CHECK-NEXT: //   launch: transpose<<<dim3((W + {{[0-9]+}}) / [[B:[0-9]+]], (H + {{[0-9]+}}) / [[B]]), dim3([[B]], [[B]])>>>
// CHECK: // scale: passes: none
// CHECK: __global__ void __launch_bounds__(1024{{(, [0-9]+)?}})
// CHECK: transpose(
// CHECK: __shared__ float s_out{{\[}}[[B]]{{\]\[}}{{[0-9]+\]}};
// CHECK: if (x < W && y < H) {
// CHECK-NEXT: s_out[tidy][tidx] = in[y * W + x];
// CHECK-NEXT: }
// CHECK-NEXT: __syncthreads();
// CHECK-NEXT: if ([[B]] * bidx + tidy < W && [[B]] * bidy + tidx < H) {
// CHECK-NEXT: out[([[B]] * bidx + tidy) * H + ([[B]] * bidy + tidx)] = s_out[tidx][tidy];
// CHECK: __global__ void scale(
// CHECK-NOT: __shared__
// CHECK: copy[y * W + x] = 2.0f * in[y * W + x];
