// OpenCL image-processing style: Sobel gradient magnitude with clamped borders, the taps
// spelled out, sqrt of the squared gradients.
// EXPECT-PASSES: stencil
// EXPECT: verified
#pragma naiveopt sizes(W=75, H=50) block(16, 16) array(in, H, W) array(out, H, W)
__kernel void sobel(__global const float *in, __global float *out, int W, int H)
{
    int x = get_global_id(0);
    int y = get_global_id(1);
    if (x < W && y < H) {
        int xm = max(x - 1, 0), xp = min(x + 1, W - 1);
        int ym = max(y - 1, 0), yp = min(y + 1, H - 1);
        float gx = -in[ym * W + xm] + in[ym * W + xp]
                   - 2.0f * in[y * W + xm] + 2.0f * in[y * W + xp]
                   - in[yp * W + xm] + in[yp * W + xp];
        float gy = -in[ym * W + xm] - 2.0f * in[ym * W + x] - in[ym * W + xp]
                   + in[yp * W + xm] + 2.0f * in[yp * W + x] + in[yp * W + xp];
        out[y * W + x] = sqrt(gx * gx + gy * gy);
    }
}
