// Naive vector-vector (outer product): C[y][x] = A[y] * B[x].
__global__ void vv(float *A, float *B, float *C, int H, int W)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < W && y < H)
        C[y * W + x] = A[y] * B[x];
}
