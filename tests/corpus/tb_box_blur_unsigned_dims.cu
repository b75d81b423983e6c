// Tutorial CUDA: a 3x3 box blur whose image dimensions are `unsigned int` parameters, its
// neighbour coordinates signed and clamped with if-statements that compare through a cast
// (`if (xx >= (int)width) xx = width - 1;`). The staged window computes those clamps and its
// bounds in signed arithmetic: OpenCL's min(int, uint) would not compile, and CUDA's picks the
// unsigned overload.
// EXPECT-PASSES: stencil
// EXPECT: verified
// OPTIONS: --cost-model=unlimited
#pragma naiveopt sizes(width=75, height=37) block(32, 8)
__global__ void boxBlur(const float *in, float *out, unsigned int width, unsigned int height)
{
    unsigned int x = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height)
        return;
    float s = 0.0f;
    for (int dy = -1; dy <= 1; dy++)
        for (int dx = -1; dx <= 1; dx++) {
            int xx = (int)x + dx, yy = (int)y + dy;
            if (xx < 0) xx = 0;
            if (yy < 0) yy = 0;
            if (xx >= (int)width) xx = width - 1;
            if (yy >= (int)height) yy = height - 1;
            s += in[yy * width + xx];
        }
    out[y * width + x] = s / 9.0f;
}
