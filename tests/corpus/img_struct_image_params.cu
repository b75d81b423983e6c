// Image-processing CUDA with the image's geometry and the filter's coefficients in one struct
// passed by value (`struct ImageParams p`, read as p.width, p.pitch, p.gain): a 3x3 sharpen
// with clamp-to-edge taps over a pitched image (row stride p.pitch >= p.width), then a gain
// and an offset. The members are sizes to naiveopt; the output keeps the struct parameter.
// EXPECT-PASSES: stencil
// EXPECT: verified
// OPTIONS: --cost-model=unlimited
#pragma naiveopt sizes(p.width=61, p.height=43, p.pitch=64) block(16, 16)
#pragma naiveopt array(in, p.height, p.pitch) array(out, p.height, p.pitch)
struct ImageParams {
    int width;
    int height;
    int pitch;          // elements per row, padding included
    float gain;
    float offset;
};

__global__ void sharpen(const float *in, float *out, ImageParams p)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= p.width || y >= p.height)
        return;
    int xm = max(x - 1, 0), xp = min(x + 1, p.width - 1);
    int ym = max(y - 1, 0), yp = min(y + 1, p.height - 1);
    float c = in[y * p.pitch + x];
    float around = in[ym * p.pitch + x] + in[yp * p.pitch + x] + in[y * p.pitch + xm] +
                   in[y * p.pitch + xp];
    out[y * p.pitch + x] = p.gain * (5.0f * c - around) + p.offset;
}
