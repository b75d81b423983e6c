// Naive vector-vector (outer product): C[y][x] = A[y] * B[x].
__kernel void vv(__global float *A, __global float *B, __global float *C, int H, int W)
{
    int x = get_global_id(0);
    int y = get_global_id(1);
    if (x < W && y < H)
        C[y * W + x] = A[y] * B[x];
}
