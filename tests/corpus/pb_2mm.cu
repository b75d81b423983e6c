// PolyBench/GPU style 2MM: tmp = A B, then D = tmp C, two matrix-product kernels in one file.
// EXPECT-PASSES: thread-block-merge, thread-merge
// EXPECT: verified
typedef float DATA_TYPE;

#pragma naiveopt sizes(ni=33, nj=39, nk=27, nl=35) block(32, 8)
#pragma naiveopt array(A, ni, nk) array(B, nk, nj) array(tmp, ni, nj) array(C, nj, nl)
#pragma naiveopt array(D, ni, nl)
__global__ void mm2_kernel1(int ni, int nj, int nk, DATA_TYPE *tmp, DATA_TYPE *A, DATA_TYPE *B)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;

    if ((i < ni) && (j < nj))
    {
        DATA_TYPE acc = 0;
        int k;
        for (k = 0; k < nk; k++)
        {
            acc += A[i * nk + k] * B[k * nj + j];
        }
        tmp[i * nj + j] = acc;
    }
}

__global__ void mm2_kernel2(int ni, int nj, int nl, DATA_TYPE *tmp, DATA_TYPE *C, DATA_TYPE *D)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;

    if ((i < ni) && (j < nl))
    {
        DATA_TYPE acc = 0;
        int k;
        for (k = 0; k < nj; k++)
        {
            acc += tmp[i * nj + k] * C[k * nl + j];
        }
        D[i * nl + j] = acc;
    }
}
