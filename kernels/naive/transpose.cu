// Naive matrix transpose: output[x][y] = input[y][x], input [H][W], output [W][H].
#define IDX(row, col, ld) ((row) * (ld) + (col))

__global__ void transpose(const float * __restrict__ input, float * __restrict__ output, int H, int W)
{
    int x = threadIdx.x + blockIdx.x * blockDim.x;
    int y = threadIdx.y + blockIdx.y * blockDim.y;
    if (x < W && y < H)
        output[IDX(x, y, H)] = input[IDX(y, x, W)];
}
