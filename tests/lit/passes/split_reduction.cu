// split-reduction: at H = 4096 rows (-D) one thread per row launches 16 blocks of 256 threads,
// 16 of sm_90's 132 SMs; the cost model estimates the loop split over lanes of a group (each
// lane a slice of the row, partial sums added in shared memory) at DRAM bandwidth, and the
// pass applies it. The column walker splits its rows with the lanes B / G threads apart, so
// that a warp still reads consecutive columns. With --fp-strict the float sums keep their
// order and the pass declines, saying why. The sizes of interest come from -D: without the
// number of outputs the pass does not guess whether the launch fills the GPU.
// RUN: %naiveopt %s -D H=4096 -D W=4096 --passes=split-reduction --no-verify --explain -o %t.cu 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: FileCheck %s < %t.cu
// RUN: %naiveopt %s -D H=4096 -D W=45 --passes=split-reduction --explain -o %t2.cl --target opencl 2>&1 | FileCheck %s --check-prefix=VERIFY
// RUN: %naiveopt %s -D H=4096 --passes=split-reduction --fp-strict --no-verify --explain 2>&1 | FileCheck %s --check-prefix=STRICT

#pragma naiveopt sizes(H=67, W=45) array(A, H, W) array(x, W) array(y, H) array(z, W)
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

__global__ void columns(const float *A, const float *y, float *z, int H, int W)
{
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c < W) {
        float sum = 0.0f;
        for (int r = 0; r < H; r++)
            sum += A[r * W + c] * y[r];
        z[c] = sum;
    }
}

// REMARK: rows: remark [split-reduction] applied: the loop over j split over [[G:[0-9]+]] threads per output
// REMARK-SAME: 4096 outputs of 4096 iterations (from -D and the file's macros): unsplit {{.*}}latency-bound, 16 of 132 SMs busy
// REMARK-SAME: DRAM-bound
// REMARK: columns: remark [split-reduction] applied: the loop over r split over {{[0-9]+}} threads per output
// REMARK-SAME: (column layout)
// CHECK: // rows: passes: split-reduction
// CHECK: // columns: passes: split-reduction
// CHECK: const int lane = tidx % [[G:[0-9]+]];
// CHECK-NEXT: const int out = bidx * {{[0-9]+}} + tidx / [[G]];
// CHECK: for (int j = lane; j < W; j += [[G]]) {
// CHECK-NEXT: p_sum += A[i * W + j] * x[j];
// CHECK: s_sum[tidx] = p_sum;
// CHECK-NEXT: __syncthreads();
// CHECK: if (lane < 1) {
// CHECK-NEXT: s_sum[tidx] += s_sum[tidx + 1];
// CHECK: if (lead) {
// CHECK-NEXT: sum += s_sum[tidx];
// CHECK-NEXT: y[i] = sum;
// CHECK: const int lane = tidx / [[P:[0-9]+]];
// CHECK-NEXT: const int out = bidx * [[P]] + tidx % [[P]];
// CHECK: if (lane < 1) {
// CHECK-NEXT: s_sum[tidx] += s_sum[tidx + [[P]]];
// VERIFY: rows: remark [split-reduction] applied
// VERIFY: verification passed
// STRICT: remark [split-reduction] missed: --fp-strict: the sums of sum keep their order
