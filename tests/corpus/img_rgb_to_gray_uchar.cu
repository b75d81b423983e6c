// Image-processing CUDA (the course-assignment classic): interleaved 8-bit RGB to grey,
// unsigned char in and out, 2-D launch over the picture.
// EXPECT-PASSES: none
// EXPECT: verified
#define CHANNELS 3
#pragma naiveopt sizes(width=83, height=29) block(16, 16)
#pragma naiveopt array(rgbImage, height, width, 3) array(grayImage, height, width)
__global__ void colorConvert(unsigned char *grayImage, unsigned char *rgbImage, int width, int height)
{
    int x = threadIdx.x + blockIdx.x * blockDim.x;
    int y = threadIdx.y + blockIdx.y * blockDim.y;
    if (x < width && y < height) {
        // get 1D coordinate for the grayscale image
        int grayOffset = y * width + x;
        // one can think of the RGB image having CHANNEL times columns than the gray scale image
        int rgbOffset = grayOffset * CHANNELS;
        unsigned char r = rgbImage[rgbOffset];     // red value for pixel
        unsigned char g = rgbImage[rgbOffset + 1]; // green value for pixel
        unsigned char b = rgbImage[rgbOffset + 2]; // blue value for pixel
        grayImage[grayOffset] = 0.21f * r + 0.71f * g + 0.07f * b;
    }
}
