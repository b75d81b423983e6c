// PolyBench style DOITGEN on a 3-D grid: sum[r][q][p] = sum_s A[r][q][s] * C4[s][p],
// r taken from blockIdx.z, C89 iterator, `s += 1`.
// EXPECT-PASSES: thread-block-merge
// EXPECT: verified
typedef float DATA_TYPE;

#pragma naiveopt sizes(nr=3, nq=21, np=37) block(32, 8)
#pragma naiveopt array(A, nr, nq, np) array(C4, np, np) array(sum, nr, nq, np)
__global__ void doitgen_kernel(int nr, int nq, int np, DATA_TYPE *sum, DATA_TYPE *A, DATA_TYPE *C4)
{
    int p = blockIdx.x * blockDim.x + threadIdx.x;
    int q = blockIdx.y * blockDim.y + threadIdx.y;
    int r = blockIdx.z;
    int s;

    if ((p < np) && (q < nq) && (r < nr))
    {
        DATA_TYPE acc = 0;
        for (s = 0; s < np; s += 1)
        {
            acc += A[(r * nq + q) * np + s] * C4[s * np + p];
        }
        sum[(r * nq + q) * np + p] = acc;
    }
}
