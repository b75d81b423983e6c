// OpenCL image-processing style: 3x3 box blur on a float image with clamp-to-edge borders
// written as min(max(...)), the way people write it without image objects.
// EXPECT-PASSES: stencil
// EXPECT: verified
#pragma naiveopt sizes(width=70, height=45) block(16, 16)
#pragma naiveopt array(src, height, width) array(dst, height, width)
__kernel void box_blur(__global const float *src, __global float *dst, int width, int height)
{
    int x = get_global_id(0);
    int y = get_global_id(1);
    if (x >= width || y >= height)
        return;

    float sum = 0.0f;
    for (int dy = -1; dy <= 1; dy++) {
        for (int dx = -1; dx <= 1; dx++) {
            int xx = min(max(x + dx, 0), width - 1);
            int yy = min(max(y + dy, 0), height - 1);
            sum += src[yy * width + xx];
        }
    }
    dst[y * width + x] = sum / 9.0f;
}
