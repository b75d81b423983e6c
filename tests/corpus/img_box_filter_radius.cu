// Image-processing CUDA: (2r+1)^2 mean filter with a run-time radius, pixels outside the image
// skipped by a bounds test on the tap (zero padding), the divisor counting what was summed.
// EXPECT-PASSES: stencil
// EXPECT: verified
// OPTIONS: --cost-model=unlimited
// (staged only where legal: at 4096 the model keeps these few taps as written, which L1 holds)
#pragma naiveopt sizes(w=61, h=43, r=2) block(16, 16) array(in, h, w) array(out, h, w)
__global__ void boxFilter(const float *in, float *out, int w, int h, int r)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;

    float sum = 0.0f;
    int count = 0;
    for (int dy = -r; dy <= r; dy++) {
        for (int dx = -r; dx <= r; dx++) {
            int yy = y + dy;
            int xx = x + dx;
            if (yy >= 0 && yy < h && xx >= 0 && xx < w) {
                sum += in[yy * w + xx];
                count++;
            }
        }
    }
    out[y * w + x] = sum / count;
}
