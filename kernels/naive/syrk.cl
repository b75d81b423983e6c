// PolyBench/GPU SYRK: C = alpha*A*A^T + beta*C, A [N][M], C [N][N].
__kernel void syrk_kernel(__global float *a, __global float *c, float alpha, float beta, int n, int m)
{
    int j = get_global_id(0);
    int i = get_global_id(1);

    if ((i < n) && (j < n)) {
        c[i * n + j] *= beta;
        for (int k = 0; k < m; k++) {
            c[i * n + j] += alpha * a[i * m + k] * a[j * m + k];
        }
    }
}
