// PolyBench/GPU style Jacobi-2D step: 5-point stencil over the interior, guards written as
// `i >= 1 && i < n - 1`, coefficient as a double literal the way the C original has it.
// EXPECT-PASSES: stencil
// EXPECT: verified
// OPTIONS: --cost-model=unlimited
// (staged only where legal: at 4096 the model keeps these few taps as written, which L1 holds)
typedef float DATA_TYPE;

#pragma naiveopt sizes(n=70) block(32, 8) array(A, n, n) array(B, n, n)
__global__ void runJacobiCUDA_kernel1(int n, DATA_TYPE *A, DATA_TYPE *B)
{
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    int j = blockIdx.x * blockDim.x + threadIdx.x;

    if ((i >= 1) && (i < (n - 1)) && (j >= 1) && (j < (n - 1)))
    {
        B[i * n + j] = 0.2f * (A[i * n + j] + A[i * n + (j - 1)] + A[i * n + (1 + j)]
                               + A[(1 + i) * n + j] + A[(i - 1) * n + j]);
    }
}
