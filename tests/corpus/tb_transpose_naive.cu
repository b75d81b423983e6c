// Tutorial CUDA: the "naive transpose" every transpose tutorial starts from
// (reads coalesced, writes strided).
// EXPECT-PASSES: coalesce-writes
// EXPECT: verified
#pragma naiveopt sizes(rows=45, cols=70) block(16, 16)
#pragma naiveopt array(in, rows, cols) array(out, cols, rows)
__global__ void transposeNaive(float *out, const float *in, int rows, int cols)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < cols && y < rows)
        out[x * rows + y] = in[y * cols + x];
}
