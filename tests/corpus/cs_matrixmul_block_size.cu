// CUDA samples style: the naive matrixMul indexed by a BLOCK_SIZE macro instead of blockDim
// (`by * BLOCK_SIZE + ty` through bx/by/tx/ty locals), Csub accumulator, wA/wB widths, no
// bounds guard (the output's sizes are multiples of BLOCK_SIZE, not of 32-wide tiles; wA odd).
// BLOCK_SIZE is taken as the naive block (the samples launch BLOCK_SIZE x BLOCK_SIZE blocks),
// so row/col are the global ids.
// EXPECT-PASSES: thread-block-merge, thread-merge
// EXPECT: verified
#define BLOCK_SIZE 16
#pragma naiveopt sizes(wA=37, wB=48, hA=80) threads(wB, hA)
#pragma naiveopt array(A, hA, wA) array(B, wA, wB) array(C, hA, wB)
__global__ void matrixMulNaive(float *C, float *A, float *B, int wA, int wB)
{
    int bx = blockIdx.x;
    int by = blockIdx.y;
    int tx = threadIdx.x;
    int ty = threadIdx.y;

    int row = by * BLOCK_SIZE + ty;
    int col = bx * BLOCK_SIZE + tx;

    float Csub = 0;
    for (int k = 0; k < wA; ++k) {
        Csub += A[row * wA + k] * B[k * wB + col];
    }
    C[row * wB + col] = Csub;
}
