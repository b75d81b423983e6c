// Image-processing CUDA: bilinear resize, source coordinates from the scale factors,
// floorf and clamped neighbour indices.
// EXPECT-PASSES: none
// EXPECT: verified
// XFAIL: unannotated: the index of src[y0_2 * srcW + x0_2] depends on a function call
#pragma naiveopt sizes(srcW=50, srcH=30, dstW=77, dstH=41) threads(dstW, dstH) block(16, 16)
#pragma naiveopt array(src, srcH, srcW) array(dst, dstH, dstW)
__global__ void resizeBilinear(const float *src, float *dst, int srcW, int srcH, int dstW, int dstH)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < dstW && y < dstH) {
        float fx = (x + 0.5f) * srcW / dstW - 0.5f;
        float fy = (y + 0.5f) * srcH / dstH - 0.5f;
        int x0 = (int)floorf(fx);
        int y0 = (int)floorf(fy);
        float ax = fx - x0;
        float ay = fy - y0;
        int x1 = min(x0 + 1, srcW - 1);
        int y1 = min(y0 + 1, srcH - 1);
        x0 = max(x0, 0);
        y0 = max(y0, 0);
        float top = src[y0 * srcW + x0] * (1.0f - ax) + src[y0 * srcW + x1] * ax;
        float bot = src[y1 * srcW + x0] * (1.0f - ax) + src[y1 * srcW + x1] * ax;
        dst[y * dstW + x] = top * (1.0f - ay) + bot * ay;
    }
}
