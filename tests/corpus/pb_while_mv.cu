// Research-benchmark style matrix-vector product written with a while loop and `k += 1`.
// EXPECT-PASSES: coalesce|vectorize
// EXPECT: verified
typedef float DATA_TYPE;

#pragma naiveopt sizes(N=203, M=67) array(A, N, M) array(x, M) array(y, N)
__global__ void mv_while(DATA_TYPE *A, DATA_TYPE *x, DATA_TYPE *y, int N, int M)
{
    int i, k;
    DATA_TYPE acc;

    i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N)
    {
        acc = 0;
        k = 0;
        while (k < M)
        {
            acc += A[i * M + k] * x[k];
            k += 1;
        }
        y[i] = acc;
    }
}
