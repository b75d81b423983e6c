// Image-processing CUDA (the convolutionSeparable sample's naive form): a row filter with the
// taps in __constant__ memory and clamp-to-edge borders via min(max(x + k, 0), W - 1).
// EXPECT-PASSES: stencil
// EXPECT: verified
// OPTIONS: --cost-model=unlimited
// (staged only where legal: at 4096 the model keeps these few taps as written, which L1 holds)
#define KERNEL_RADIUS 3
#define KERNEL_LENGTH (2 * KERNEL_RADIUS + 1)
__constant__ float c_Kernel[KERNEL_LENGTH];

#pragma naiveopt sizes(imageW=75, imageH=37) block(16, 16)
#pragma naiveopt array(d_Src, imageH, imageW) array(d_Dst, imageH, imageW)
__global__ void convolutionRowsNaive(float *d_Dst, const float *d_Src, int imageW, int imageH)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < imageW && y < imageH) {
        float sum = 0;
        for (int k = -KERNEL_RADIUS; k <= KERNEL_RADIUS; k++) {
            int sx = min(max(x + k, 0), imageW - 1);
            sum += d_Src[y * imageW + sx] * c_Kernel[KERNEL_RADIUS - k];
        }
        d_Dst[y * imageW + x] = sum;
    }
}
