// A sum of K * N terms (75 000 at the odd sizes) in a loop over k that partition-camping
// rotates per block on gfx90a: the reordered sum differs from the naive kernel's by 2e-4,
// beyond float32's tolerance. Found by the fuzzer (seed 100, case 21): a failed verification
// and no output. Now the file is compiled again keeping the order (as --fp-strict).
// RUN: %naiveopt %s --target opencl --arch gfx90a --passes partition-camping --require-verified --explain -o %t.cl 2>&1 | FileCheck %s
// CHECK: remark [verify] missed: the output of partition-camping (a reordering of floating-point arithmetic) differed
// CHECK: verification passed
// RUN: FileCheck --check-prefix=OUT %s < %t.cl
// OUT-NOT: k_first
// OUT: for (int k = 0; k < K; k++)
__kernel void k0(__global float *A, __global float *restrict B, __global const float *C, __global float *D, __global float *E, __global const float *F, int N, int K, __global const float3 *V)
{
    int tx = get_local_id(0);
    int bx = get_group_id(0);
    int i = bx * get_local_size(0) + tx;
    int l;
    if (i < N) {
        float acc = 0.0f;
        for (int k = 0; k < K; k++) {
            acc += A[(2 * i + 2) * (N + 2) + i + 2];
            for (l = 0; l <= N - 1; l = l + 1) {
                acc += B[(2 * k) * (2 * N + 2) + i];
            }
            acc += (float)l;
            if (D[(N - 1 - i) * K + K - 1 - k] > 0.0f)
                acc += C[(N - 1 - i) * (N + 2) + i] + C[(N - 1 - i) * (N + 2) + N - 1 - i];
        }
        for (int k = 0; k < K; k = 1 + k) {
            E[i * (K + 1) + k] = D[i * K + k];
        }
        int tap1 = min(max(i - 2, 0), N - 1);
        int tap2 = (i >= 1 ? i - 1 : 0);
        acc += (F[clamp(i - 2, 0, N - 1)] + V[clamp(i - 2, 0, N - 1)].y) + F[tap1] + F[max(i - 1, 0)] + (F[tap2] + V[tap2].x) + F[max(i - 1, 0)];
        E[i * (K + 1) + 1u] = acc;
    }
}

