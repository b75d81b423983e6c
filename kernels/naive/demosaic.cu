// Naive bilinear demosaic of an RGGB Bayer image raw [H][W] into planar RGB rgb [3][H][W].
// Bayer pattern: even row/even col = R, odd row/odd col = B, the other two = G.
// Neighbour coordinates are clamped at the image borders.
__device__ int clamp_coord(int v, int n)
{
    if (v < 0) return 0;
    if (v >= n) return n - 1;
    return v;
}

__device__ float pixel(const float *raw, int y, int x, int H, int W)
{
    return raw[clamp_coord(y, H) * W + clamp_coord(x, W)];
}

__global__ void demosaic(const float *raw, float *rgb, int H, int W)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < W && y < H) {
        float c     = pixel(raw, y, x, H, W);
        float cross = (pixel(raw, y - 1, x, H, W) + pixel(raw, y + 1, x, H, W) +
                       pixel(raw, y, x - 1, H, W) + pixel(raw, y, x + 1, H, W)) * 0.25f;
        float diag  = (pixel(raw, y - 1, x - 1, H, W) + pixel(raw, y - 1, x + 1, H, W) +
                       pixel(raw, y + 1, x - 1, H, W) + pixel(raw, y + 1, x + 1, H, W)) * 0.25f;
        float horiz = (pixel(raw, y, x - 1, H, W) + pixel(raw, y, x + 1, H, W)) * 0.5f;
        float vert  = (pixel(raw, y - 1, x, H, W) + pixel(raw, y + 1, x, H, W)) * 0.5f;
        float r, g, b;
        if (y % 2 == 0 && x % 2 == 0) {        // red pixel
            r = c;     g = cross; b = diag;
        } else if (y % 2 == 0) {               // green pixel on a red row
            r = horiz; g = c;     b = vert;
        } else if (x % 2 == 0) {               // green pixel on a blue row
            r = vert;  g = c;     b = horiz;
        } else {                               // blue pixel
            r = diag;  g = cross; b = c;
        }
        rgb[y * W + x] = r;
        rgb[H * W + y * W + x] = g;
        rgb[2 * H * W + y * W + x] = b;
    }
}
