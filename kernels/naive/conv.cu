// Naive 2-D convolution (valid region): out[y][x] = sum_{i<K,j<K} input[y+i][x+j] * filt[i][j].
// input is [H+K-1][W+K-1], filt [K][K], out [H][W].
__global__ void conv(float *input, float *filt, float *output, int H, int W, int K)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int inW = W + K - 1;
    if (y < H && x < W) {
        float sum = 0.0f;
        for (int i = 0; i < K; i++)
            for (int j = 0; j < K; j++)
                sum += input[(y + i) * inW + (x + j)] * filt[i * K + j];
        output[y * W + x] = sum;
    }
}
