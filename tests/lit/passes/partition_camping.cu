// partition-camping on gfx90a (addresses interleave over 32 channels in 256-byte chunks): the
// transpose's write out[x * H + y] moves by a multiple of the interleave period between
// consecutive blocks, so a wave of blocks queues on one channel: the blocks are taken in
// diagonal order. In rows, A[i * W + j] does the same along the loop over j: each block starts
// the loop at its own iteration and wraps around. NVIDIA targets hash addresses across
// partitions: on sm_90 the pass declines, saying so.
// RUN: %naiveopt %s --passes=partition-camping --arch gfx90a --explain -o %t.cu 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: FileCheck %s < %t.cu
// RUN: %naiveopt %s --passes=partition-camping --arch sm_90 --explain -o %t.nvidia.cu 2>&1 | FileCheck %s --check-prefix=NVIDIA

#pragma naiveopt sizes(H=37, W=45) array(in, H, W) array(out, W, H)
#pragma naiveopt array(A, H, W) array(x, W) array(y, H)
__global__ void transpose(const float *in, float *out, int H, int W)
{
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (c < W && r < H)
        out[c * H + r] = in[r * W + c];
}

__global__ void rows(const float *A, const float *x, float *y, int H, int W)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < H) {
        float sum = 0.0f;
        for (int j = 0; j < W; j++)
            sum += A[i * W + j] * x[j];
        y[i] = sum;
    }
}

// REMARK: transpose: remark [partition-camping] applied: diagonal block order {{.*}}: out (write) {{.*}}: 1 -> {{[0-9]+}} channels of 32
// REMARK: rows: remark [partition-camping] applied: A (read): a wave of {{[0-9]+}} blocks hit 1 of 32 channels {{.*}}; each block starts the loop over j {{[0-9]+}} iteration(s) (256 B) per block further on and wraps around
// REMARK: transpose: verification passed
// REMARK: rows: verification passed

// CHECK: // transpose: passes: partition-camping
// CHECK: // rows: passes: partition-camping
// CHECK: __global__ void transpose(
// CHECK: const int bid_linear = bidx + gridDimX * bidy;
// CHECK-NEXT: const int bidy_diag = bid_linear % gridDimY;
// CHECK-NEXT: const int bidx_diag = (bid_linear / gridDimY + bidy_diag) % gridDimX;
// CHECK-NEXT: int c = bidx_diag * blockDimX + tidx;
// CHECK-NEXT: int r = bidy_diag * blockDimY + tidy;
// CHECK: out[c * H + r] = in[r * W + c];
// CHECK: __global__ void rows(
// CHECK: const int j_n = W;
// CHECK-NEXT: const int j_first = (j_n > 0) ? (bidx % j_n * {{[0-9]+}} % j_n) : (0);
// CHECK-NEXT: for (int j_t = j_first; j_t < j_first + j_n; j_t++) {
// CHECK-NEXT: const int j = j_t % j_n;
// CHECK-NEXT: sum += A[i * W + j] * x[j];

// NVIDIA: transpose: remark [partition-camping] missed: sm_90: addresses are hashed across partitions; no partition camping
// NVIDIA: rows: remark [partition-camping] missed: sm_90: addresses are hashed across partitions; no partition camping
// NVIDIA-NOT: applied
// NVIDIA: transpose: verification passed
