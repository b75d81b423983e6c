// PolyBench/GPU style SYRK: C = alpha A A^T + beta C, C89 iterator, 2-D grid, the scalars
// spelled float as many ports write them (arrays stay DATA_TYPE).
// EXPECT-PASSES: register-promotion, thread-block-merge, thread-merge
// EXPECT: verified
typedef float DATA_TYPE;

#pragma naiveopt sizes(n=45, m=38) block(32, 8)
#pragma naiveopt array(a, n, m) array(c, n, n) scalar(alpha, 1.5) scalar(beta, 0.5)
__global__ void syrk_kernel(float alpha, float beta, DATA_TYPE *a, DATA_TYPE *c,
                            int n, int m)
{
    /*  C := alpha*A*A' + beta*C */
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;

    if ((i < n) && (j < n))
    {
        c[i * n + j] *= beta;
        int k;
        for (k = 0; k < m; k++)
        {
            c[i * n + j] += alpha * a[i * m + k] * a[j * m + k];
        }
    }
}
