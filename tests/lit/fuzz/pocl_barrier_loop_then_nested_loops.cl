// Not a naiveopt bug: PoCL 3.0 (LLVM 14) crashes ("double free or corruption") or computes
// wrong values for this correct output of thread-block-merge, a barrier loop followed by
// guarded nested loops, when it builds with optimization. Verification builds with
// -cl-opt-disable (naiveopt/verify/opencl.py, CHECK_OPTIONS), so the output verifies.
// Found by python -m naiveopt.fuzz --seed 20261 (case 7), reduced.
// RUN: %naiveopt %s --arch gfx90a --disable-pass=thread-merge --disable-pass=prefetch --disable-pass=partition-camping --disable-pass=vectorize --require-verified --explain -o %t.cl 2>&1 | FileCheck %s
#pragma naiveopt sizes(N=65, M=65, K=7) block(8, 8) array(D, N, (K + 2)) array(E, K, M) array(H, N, M)
__kernel void k0(__global const float *D, __global float *E, __global float *H, int N, int M, int K)
{
    int i = get_global_id(0);
    int j = get_global_id(1);
    if (i >= N || j >= M)
        return;
    float acc = 0.0f;
    for (int k = 0; k < K; k++) {
        for (int l = 0; l < N; l++) {
            acc += E[k * M + j] + D[l * (K + 2) + k];
        }
    }
    for (int k = K - 1; k >= 0; k--) {
        for (int l = 0; l < N; l++) {
            acc += 1.0f;
        }
    }
    H[i * M + j] = acc;
}

// CHECK: k0: remark [thread-block-merge] applied:
// CHECK: k0: verification passed
