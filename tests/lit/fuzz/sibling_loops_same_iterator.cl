// Two sibling loops over the same iterator name: the staged read is in the second loop, but
// the passes looked the loop up by name and found the first (KeyError in the tiling engine).
// Found by python -m naiveopt.fuzz --seed 1 (case 9), reduced.
// RUN: %naiveopt %s --target cuda --arch gfx90a --require-verified --explain -o %t.cu 2>&1 | FileCheck %s
#pragma naiveopt sizes(N=47, K=63) array(F, N, K) array(C, N, N)
__kernel void k1(__global const float *F, __global float *C, int N, int K)
{
    int i = get_global_id(0);
    int j = get_global_id(1);
    if (i < N && j < N) {
        float acc = 0.0f;
        for (int k = 0; k < K; k++) {
        }
        for (int k = 0; k < K; k++) {
            acc += F[j * K + k];
        }
        C[j * N + i] = acc;
    }
}

// CHECK: k1: remark [thread-block-merge] applied:
// CHECK: k1: verification passed
