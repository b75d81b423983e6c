// coalesce: in rows, A[i * W + j] moves by W between neighbouring threads (every thread of a
// warp in its own sector): the loop over j is tiled, the block's rows of each tile are loaded
// into a padded shared tile by consecutive threads, and the sum reads the tile; x[j], the same
// for every thread, is staged with it. In columns, A[j * W + i] is already coalesced: the pass
// leaves it in global memory and declines, saying why.
// RUN: %naiveopt %s --passes=coalesce --explain -o %t.cu 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: FileCheck %s < %t.cu

#pragma naiveopt sizes(H=67, W=45) array(A, H, W) array(x, W) array(y, H)
#pragma naiveopt array(B, H, W) array(z, W)
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

__global__ void columns(const float *B, float *z, int H, int W)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < W) {
        float sum = 0.0f;
        for (int j = 0; j < H; j++)
            sum += B[j * W + i];
        z[i] = sum;
    }
}

// REMARK: rows: remark [coalesce] analysis: A(idx, j): uncoalesced, stride W in x: to be staged through shared memory
// REMARK: rows: remark [coalesce] analysis: x[j]: broadcast in the tiled loop: staged with the tile
// REMARK: rows: remark [coalesce] applied: staged in shared memory: A(idx, j) -> s_A[{{[0-9]+}}][{{[0-9]+}}], x[j] -> s_x[{{[0-9]+}}]
// REMARK: columns: remark [coalesce] analysis: B(j, idx): coalesced (unit stride in x), left in global memory
// REMARK: columns: remark [coalesce] missed: no uncoalesced global read in a loop that can be tiled
// REMARK: rows: verification passed
// REMARK: columns: verification passed

// CHECK: // rows: passes: coalesce
// CHECK: // columns: passes: none
// CHECK: __global__ void __launch_bounds__({{64|128|256}}{{(, [0-9]+)?}})
// CHECK: rows(
// CHECK: __shared__ float s_A{{\[}}[[BX:[0-9]+]]{{\]\[[0-9]+\]}};
// CHECK-NEXT: __shared__ float s_x{{\[}}[[T:[0-9]+]]{{\]}};
// CHECK: for (int j0 = 0; j0 < W; j0 += [[T]]) {
// CHECK-NEXT: for (int e = tidx; e < {{[0-9]+}}; e += [[BX]]) {
// CHECK: s_A[r][c] =
// CHECK-NEXT: (c + j0 < W && [[BX]] * bidx + r < H) ? (A[([[BX]] * bidx + r) * W + (c + j0)]) : (0);
// CHECK: s_x[e] = (e + j0 < W) ? (x[e + j0]) : (0);
// CHECK: __syncthreads();
// CHECK-NEXT: for (int jj = 0; jj < [[T]] && j0 + jj < W; jj++) {
// CHECK-NEXT: sum += s_A[tidx][jj] * s_x[jj];
// CHECK: __syncthreads();
// CHECK: __global__ void columns(
// CHECK-NOT: __shared__
// CHECK: sum += B[j * W + i];
