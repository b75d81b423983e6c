// split-locals: an integer local that straight-line code assigns again is a local per
// definition (the NVIDIA blog's transposeCoalesced reuses x and y for its output), so that
// the analyses read each as a name for its value: the output's extents are inferred and the
// kernel verified without pragmas. A local also assigned inside a loop or stepped stays one.
// RUN: %naiveopt %s --explain -o %t.cu 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: %naiveopt %s --no-opt --no-verify | FileCheck %s
#define TILE 16

__global__ void transpose_reuse(float *out, const float *in, int W)
{
    __shared__ float tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    tile[threadIdx.y][threadIdx.x] = in[y * W + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    out[y * W + x] = tile[threadIdx.x][threadIdx.y];
}

__global__ void stepped(float *out, const float *in, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = in[i];
    i += n;
    if (i < 2 * n)
        out[i] = 2.0f * in[i - n];
}

// REMARK: transpose_reuse: remark [split-locals] applied: 2 reassigned local(s) split, one per definition: x -> x_2; y -> y_2
// REMARK-NOT: stepped: remark [split-locals] applied
// REMARK: transpose_reuse: verification passed: inferred
// REMARK: stepped: verification
// CHECK-LABEL: __global__ void transpose_reuse(
// CHECK: tile[tidy][tidx] = in[y * W + x];
// CHECK: int x_2 = bidy * TILE + tidx;
// CHECK-NEXT: int y_2 = bidx * TILE + tidy;
// CHECK-NEXT: out[y_2 * W + x_2] = tile[tidx][tidy];
// CHECK-LABEL: __global__ void stepped(
// CHECK: i += n;
