// --merge 4:4 on a 1-D kernel: thread merge made 4 copies along y, which has no dimension, so
// each thread ran its in-place loop over C 4 times (miscompile); y is now merged by 1, with a
// remark. Found by python -m naiveopt.fuzz --seed 2026 (case 257), reduced.
// RUN: %naiveopt %s --target opencl --arch gfx90a --merge=4:4 --require-verified --explain -o %t.cl 2>&1 | FileCheck %s
#pragma naiveopt sizes(N=255, K=64) threads(N) block(256) array(A, N, K) array(B, N) array(C, K, (N + 1)) array(D, (2 * N + 1), N) array(E, (N + 1), (K + 1)) array(F, (N + 2), (N + 1))
__global__ void k0(float *__restrict__ A, const float *B, float *C, float *__restrict__ D, const float *E, const float *__restrict__ F, int N, int K)
{
    int i = threadIdx.x + blockIdx.x * blockDim.x;
    if (i < N) {
        for (int k = K - 1; k >= 0; k--) {
            C[(K - 1 - k) * (N + 1) + i] = D[i * N + i] * C[k * (N + 1) + i];
        }
        for (int k = 0; k < K; k++) {
            float t1 = A[i * K + K - 1 - k] * A[i * K + k] - E[i * (K + 1) + k];
        }
    }
}

// CHECK: k0: remark [thread-merge] missed: --merge 4:4: the kernel has no y dimension, so merging along y would repeat each thread's work; merging 4:1
// CHECK: k0: verification passed
