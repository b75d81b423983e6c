// Tutorial CUDA: a separable box filter whose neighbour coordinates are clamped to the image with
// if-statements (`if (xx < 0) xx = 0; else if (xx > width - 1) ...`), C89 locals, a typedef'd
// element type and an int radius. The clamps read as min/max (the clamp-ifs canonicalization),
// so the reads stay inside the image and the kernel verifies without annotations.
// EXPECT-PASSES: stencil
// EXPECT: verified
// OPTIONS: --cost-model=unlimited
// (staged only where legal: at 4096 the model keeps these few taps as written, which L1 holds)
typedef float real;

#pragma naiveopt sizes(width=75, height=37, radius=2) block(16, 16)
#pragma naiveopt array(in, height, width) array(out, height, width)
__global__ void boxRows(const real *in, real *out, int width, int height, int radius)
{
    int x, y, k, xx;
    real sum;
    x = blockIdx.x * blockDim.x + threadIdx.x;
    y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height)
        return;
    sum = 0;
    for (k = -radius; k <= radius; k++) {
        xx = x + k;
        if (xx < 0)
            xx = 0;
        else if (xx > width - 1)
            xx = width - 1;
        sum += in[y * width + xx];
    }
    out[y * width + x] = sum / (2 * radius + 1);
}

#pragma naiveopt sizes(width=75, height=37, radius=2) block(16, 16)
#pragma naiveopt array(in, height, width) array(out, height, width)
__global__ void boxCols(const real *in, real *out, int width, int height, int radius)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < width && y < height) {
        real sum = 0;
        for (int k = -radius; k <= radius; k++) {
            int yy = y + k;
            if (yy < 0) {
                yy = 0;
            }
            if (yy >= height) {
                yy = height - 1;
            }
            sum += in[yy * width + x];
        }
        out[y * width + x] = sum / (2 * radius + 1);
    }
}
