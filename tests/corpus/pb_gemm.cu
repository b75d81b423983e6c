// PolyBench/GPU style GEMM: C = alpha * A * B + beta * C, DATA_TYPE typedef, C89 iterator
// declared at the top, size macros _PB_NI/NI and int parameters that mirror them.
// EXPECT-PASSES: register-promotion, thread-block-merge
// (no thread-merge at 37x45: 9 of 132 SMs busy, fewer outputs a thread keep more busy)
// EXPECT: verified
#define NI 37
#define NJ 45
#define NK 29
#define _PB_NI NI
#define _PB_NJ NJ
#define _PB_NK NK

typedef float DATA_TYPE;

#pragma naiveopt sizes(ni=37, nj=45, nk=29) block(32, 8)
#pragma naiveopt array(a, ni, nk) array(b, nk, nj) array(c, ni, nj)
#pragma naiveopt scalar(alpha, 32412.0) scalar(beta, 2123.0)
__global__ void gemm_kernel(int ni, int nj, int nk, DATA_TYPE alpha, DATA_TYPE beta,
                            DATA_TYPE *a, DATA_TYPE *b, DATA_TYPE *c)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;

    if ((i < _PB_NI) && (j < _PB_NJ))
    {
        c[i * NJ + j] *= beta;
        int k;
        for (k = 0; k < _PB_NK; k++)
        {
            c[i * NJ + j] += alpha * a[i * NK + k] * b[k * NJ + j];
        }
    }
}
