// async-pipeline after coalesce and prefetch, on sm_90: the staged tile of A gets S shared
// buffers; before the loop the tiles 0 .. S-2 are copied asynchronously (cp.async), one group
// each; every iteration waits for its own tile's group, waits at the barrier, issues the
// copies of the tile S-1 ahead into the buffer the previous iteration read, and computes
// while they are in flight. The copies replace register prefetch (no p_A registers) and are
// range-checked like the synchronous loads (zero-filled, nothing read). --pipeline-stages
// forces the depth. OpenCL output keeps register prefetch and says why, and so does an
// architecture without cp.async.
// RUN: %naiveopt %s --passes=coalesce,prefetch,async-pipeline --pipeline-stages 3 --explain -o %t.cu 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: FileCheck %s < %t.cu
// RUN: %naiveopt %s --passes=coalesce,prefetch,async-pipeline --target opencl --explain -o %t.cl 2>&1 | FileCheck %s --check-prefix=OPENCL
// RUN: %naiveopt %s --passes=coalesce,prefetch,async-pipeline --arch sm_75 --explain -o %t.75.cu 2>&1 | FileCheck %s --check-prefix=OLD

#pragma naiveopt sizes(N=45, M=37, K=29) array(A, M, K) array(B, N, K) array(C, N, M)
__global__ void dots(const float *A, const float *B, float *C, int N, int M, int K)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < N && col < M) {
        float sum = 0.0f;
        for (int k = 0; k < K; k++)
            sum += A[col * K + k] * B[row * K + k];
        C[row * M + col] = sum;
    }
}

// REMARK: dots: remark [prefetch] applied: prefetching
// REMARK: dots: remark [async-pipeline] analysis: 3-stage cp.async pipeline chosen: estimated
// REMARK: dots: remark [async-pipeline] applied: 3-stage cp.async pipeline replaces register prefetch: 2 tile(s) in flight while the block computes, 6336 B shared memory
// REMARK: dots: verification passed

// CHECK: // dots: passes: coalesce, prefetch, async-pipeline
// CHECK: void naiveopt_cp_async(NaiveoptElem *dst, const NaiveoptElem *src,
// CHECK: asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n"
// CHECK: __shared__ float s_A[3][16][33];
// CHECK-NOT: p_A
// CHECK: int st = 0;
// CHECK-NEXT: int ws = 2;
// CHECK: const int k0 = 0;
// CHECK: naiveopt_cp_async(&s_A[0][r][c], &A[(16 * bidx + r) * K + (c + k0)],
// CHECK-NEXT: c + k0 < K && 16 * bidx + r < M);
// CHECK: naiveopt_cp_async_commit();
// CHECK: const int k0 = 0 + 32;
// CHECK: naiveopt_cp_async(&s_A[1][r][c],
// CHECK: naiveopt_cp_async_commit();
// CHECK-NEXT: for (int k0 = 0; k0 < K; k0 += 32) {
// CHECK-NEXT: naiveopt_cp_async_wait<1>();
// CHECK-NEXT: __syncthreads();
// CHECK: naiveopt_cp_async(&s_A[ws][r][c], &A[(16 * bidx + r) * K + (c + k0 + 64)],
// CHECK-NEXT: c + k0 + 64 < K && 16 * bidx + r < M);
// CHECK: naiveopt_cp_async_commit();
// CHECK: sum += s_A[st][tidx][kk] * B[row * K + k];
// CHECK: ws = st;
// CHECK-NEXT: st = (st + 1 == 3) ? (0) : (st + 1);
// CHECK-NEXT: }
// CHECK: naiveopt_cp_async_wait<0>();

// OPENCL: dots: remark [prefetch] applied
// OPENCL: dots: remark [async-pipeline] missed: OpenCL output has no asynchronous copy (cp.async, sm_80 and later): the tiles stay prefetched through registers
// OPENCL: dots: verification passed

// OLD: dots: remark [async-pipeline] missed: sm_75 has no asynchronous copy
// OLD: dots: verification passed
