// CUDA samples style: matrixMul's kernel as a template over the tile size
// (`template <int BLOCK_SIZE> __global__ void MatrixMulCUDA(...)`), here the naive product
// indexed through it, launched as MatrixMulCUDA<16> or MatrixMulCUDA<32> by the block size the
// host picks at run time. Each instance is a kernel of its own (MatrixMulCUDA_16,
// MatrixMulCUDA_32), the parameter a macro of each; the host's block is a variable, but the
// host chose the instance for it, so each instance's argument is taken as its block (16 x 16,
// 32 x 32) and both are staged.
// EXPECT-PASSES: thread-block-merge, thread-merge
// EXPECT: verified
#pragma naiveopt sizes(wA=37, wB=64, hA=96) threads(wB, hA)
template <int BLOCK_SIZE>
__global__ void MatrixMulCUDA(float *C, float *A, float *B, int wA, int wB)
{
    int bx = blockIdx.x;
    int by = blockIdx.y;
    int tx = threadIdx.x;
    int ty = threadIdx.y;
    int row = by * BLOCK_SIZE + ty;
    int col = bx * BLOCK_SIZE + tx;
    float Csub = 0;
    for (int k = 0; k < wA; ++k)
        Csub += A[row * wA + k] * B[k * wB + col];
    C[row * wB + col] = Csub;
}

void MatrixMultiply(float *d_C, float *d_A, float *d_B, int wA, int wB, int hA, int block_size)
{
    dim3 threads(block_size, block_size);
    dim3 grid(wB / threads.x, hA / threads.y);
    if (block_size == 16)
        MatrixMulCUDA<16><<<grid, threads>>>(d_C, d_A, d_B, wA, wB);
    else
        MatrixMulCUDA<32><<<grid, threads>>>(d_C, d_A, d_B, wA, wB);
}
