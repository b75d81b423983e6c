// Naive matrix transpose: output[x][y] = input[y][x], input [H][W], output [W][H].
#define IDX(row, col, ld) ((row) * (ld) + (col))

__kernel void transpose(__global const float * restrict input, __global float * restrict output, int H, int W)
{
    int x = get_global_id(0);
    int y = get_global_id(1);
    if (x < W && y < H)
        output[IDX(x, y, H)] = input[IDX(y, x, W)];
}
