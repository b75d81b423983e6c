// OpenCL style: RGBA8 to luminance, uchar4 pixels, convert_uchar_sat rounding.
// EXPECT-PASSES: none
// EXPECT: verified
#pragma naiveopt sizes(width=97, height=33) block(16, 16)
#pragma naiveopt array(rgba, height, width) array(gray, height, width)
__kernel void rgba_to_gray(__global const uchar4 *rgba, __global uchar *gray, int width, int height)
{
    int x = get_global_id(0);
    int y = get_global_id(1);
    if (x < width && y < height) {
        uchar4 p = rgba[y * width + x];
        float l = 0.299f * p.x + 0.587f * p.y + 0.114f * p.z;
        gray[y * width + x] = convert_uchar_sat(l);
    }
}
