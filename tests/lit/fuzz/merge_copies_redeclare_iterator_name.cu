// naiveopt fuzz reproducer (seed 20271126, case 1953): thread-merge copied a block-scope
// 'int k = ...' (the value of a C89 loop iterator after its loop) into every merged copy
// without renaming it, beside the tiled loop's shared iterator k: redefinition of 'k' in
// the output, which did not build. Merges now decline there, saying why.
// RUN: %naiveopt %s --target opencl --arch gfx90a --disable-pass=prefetch --require-verified --explain -o %t.cl 2>&1 | FileCheck %s
__device__ float combine(float a, float b)
{
    return a * b + 0.5f * a;
}

__global__ void k0(float *A, float *B, float *C, const float *D, float *E, float *F, float *G, const float *H, int half, int L, int K)
{
    int i = threadIdx.x + blockIdx.x * blockDim.x;
    int j = blockDim.y * blockIdx.y + threadIdx.y;
    int k, l;
    if (i < half && j < half) {
        float global = 0.0f;
        for (k = 1; k < L; k += 2) {
            for (int l = 0; l < L; ++l) {
                global += A[l];
                B[i * half + j] += combine(B[i * half + j], combine(C[(L - 1 - k) * (L + 1) + k + 1], (float)k));
                B[i * half + j] += combine(2.0f, A[l]) - A[k] + D[k * 2 * half + 2 * i];
            }
            for (int l = 0; l <= k; l++) {
                float t1 = E[L - 1 - k];
                global += t1 * t1;
                F[i * half + j] = B[i * half + j] * D[k * 2 * half + half - 1 - i] + C[k * (L + 1) + l + 1];
            }
        }
        global += (float)k;
        for (k = 0; k < K; k++) {
            global += 2.5e-1f + G[j * K + k] + A[0'1];
            for (l = 0; l <= k; l++) {
                int tap1 = max(min(i + 1, half - 1), 0);
                global += H[tap1 * K + K - 1 - k] - (float)j;
            }
            global = fmaxf(global, 1.5f);
        }
        F[i * half + j] = global;
    }
}


// CHECK: remark [thread-merge] missed: {{.*}}iterator name 'k' is declared again elsewhere
// CHECK: k0: verification passed
