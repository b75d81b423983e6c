// thread-merge, register-tiled, OpenCL (register_tiling.cu says what the layout is): gemm as
// PolyBench writes it, after register promotion and invariant factors: the running value of
// c[i][j] read and scaled before the loop is sunk past it, so a thread holds its 4x8
// accumulators, not 32 more values, across the loop. The block is 32x8, not the naive 16x16:
// OpenCL has no trap, so only reqd_work_group_size refuses a stale naive launch. Sizes are
// not tile multiples.
// RUN: %naiveopt %s --register-tile 4:8 --explain -o %t.cl 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: FileCheck %s < %t.cl

#pragma naiveopt sizes(NI=150, NJ=70, NK=21) array(a, NI, NK) array(b, NK, NJ) array(c, NI, NJ)
__kernel void gemm(__global float *a, __global float *b, __global float *c, float alpha,
                   float beta, int NI, int NJ, int NK)
{
    int j = get_global_id(0);
    int i = get_global_id(1);
    if ((i < NI) && (j < NJ)) {
        c[i * NJ + j] *= beta;
        for (int k = 0; k < NK; k++)
            c[i * NJ + j] += alpha * a[i * NK + k] * b[k * NJ + j];
    }
}

// REMARK: gemm: remark [thread-merge] applied: each thread computes 4x8 outputs (x=4, y=8), register-tiled in runs of 4 adjacent ones; block 32x8 covers 128x64 outputs; k-tile 8, row tiles stored k-major
// REMARK: gemm: verification passed

// CHECK: reqd_work_group_size(32, 8, 1)
// CHECK: __local float s_a[8][68];
// CHECK: for (; k0 + 8 <= NK; k0 += 8) {
// CHECK: #pragma unroll
// CHECK-NEXT: for (int kk = 0; kk < 8; kk++) {
// CHECK: r_c_alpha_0_0 += s_a[kk][4 * tidy] * s_b[kk][4 * tidx];
// CHECK: if (k0 < NK) {
// CHECK: float r_c_0_0 = 0;
// CHECK-NEXT: r_c_0_0 = c[i_0_0 * NJ + j_0_0];
// CHECK-NEXT: r_c_0_0 += alpha * r_c_alpha_0_0;
