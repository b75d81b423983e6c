// A tutorial's first matmul, with no annotations at all: a typedef'd element type, a size_t
// width, a C89 iterator, indices through a TILE macro instead of blockDim, and no bounds
// guard (the tutorial says the width must be a multiple of TILE). Its thread space is
// inferred before the passes (Width columns, the row width its write implies, and a free
// row count), so thread merge takes register tiles that overhang a multiple of 16 behind a
// guard it adds (`int naiveopt_globalDimY`). The pragma gives a width and nothing else.
// EXPECT-PASSES: thread-block-merge, thread-merge
// EXPECT: verified
#pragma naiveopt sizes(Width=48)
typedef float real_t;
#define TILE 16

__global__ void matmul(const real_t *A, const real_t *B, real_t *C, size_t Width)
{
    size_t row = blockIdx.y * TILE + threadIdx.y;
    size_t col = blockIdx.x * TILE + threadIdx.x;
    real_t sum = 0;
    size_t k;
    for (k = 0; k < Width; k++)
        sum += A[row * Width + k] * B[k * Width + col];
    C[row * Width + col] = sum;
}
