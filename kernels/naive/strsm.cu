// Naive triangular solve with many right-hand sides: L X = B,
// L [N][N] lower triangular, B and X [N][M]. One thread per column j (forward substitution).
#define L_AT(i, k) L[(i) * N + (k)]

__global__ void strsm(const float *L, const float *B, float *X, int N, int M)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < M) {
        for (int i = 0; i < N; i++) {
            float s = B[i * M + j];
            for (int k = 0; k < i; k++)
                s -= L_AT(i, k) * X[k * M + j];
            X[i * M + j] = s / L_AT(i, i);
        }
    }
}
