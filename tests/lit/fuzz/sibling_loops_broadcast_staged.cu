// coalesce tiled the first of two sibling loops over k and staged a broadcast read of the
// second (G[0 * N + k]) with it: classify matched loops by iterator name only (KeyError in
// the tiling engine); it now also checks that the access is in that loop.
// Found by python -m naiveopt.fuzz --seed 2026 (case 145), reduced.
// RUN: %naiveopt %s --target cuda --arch sm_80 --disable-pass=thread-block-merge --disable-pass=thread-merge --require-verified --explain -o %t.cu 2>&1 | FileCheck %s
#pragma naiveopt sizes(N=64, K=63) array(G, K, N) array(P, (2 * N + 1), K) array(Q, (K + 2)) array(R, N)
__global__ void k1(const float *__restrict__ G, float *P, float *Q, float *R, int N, int K)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) {
        float acc = 0.0f;
        for (int k = 0; k < K; k++) {
            acc += P[(2 * i) * K + k] * P[i * K + k] - Q[k];
        }
        for (int k = 0; k < N; k++) {
            acc = acc * 0.5f + G[0 * N + k];
        }
        R[i] = acc;
    }
}

// CHECK: k1: remark [coalesce] applied: staged in shared memory: P(idx, k) -> s_P[{{[0-9]+}}][{{[0-9]+}}], Q[k] -> s_Q[{{[0-9]+}}];
// CHECK: k1: verification passed
