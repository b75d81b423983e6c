// Image-processing CUDA with the reads behind __device__ helpers: a clamp-to-edge helper
// written as if-returns and a fetch helper taking the image pointer (demosaic and bilateral
// codes are written this way), an early-return guard, a 5-point sharpen.
// EXPECT-PASSES: stencil
// EXPECT: verified
// OPTIONS: --cost-model=unlimited
// (staged wherever legal: at this file's small sizes, or with its few taps held in L1,
// the cost model keeps it as written by default; the form is what is tested here)
__device__ __forceinline__ int clamp_to_edge(int v, int n)
{
    if (v < 0)
        return 0;
    else if (v > n - 1)
        return n - 1;
    return v;
}

__device__ __forceinline__ float fetch(const float *img, int x, int y, int width, int height)
{
    return img[clamp_to_edge(y, height) * width + clamp_to_edge(x, width)];
}

#pragma naiveopt sizes(width=75, height=45) block(16, 16)
#pragma naiveopt array(src, height, width) array(dst, height, width)
__global__ void sharpen(const float *src, float *dst, int width, int height)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height)
        return;
    float centre = fetch(src, x, y, width, height);
    float around = fetch(src, x - 1, y, width, height) + fetch(src, x + 1, y, width, height)
                 + fetch(src, x, y - 1, width, height) + fetch(src, x, y + 1, width, height);
    dst[y * width + x] = 5.0f * centre - around;
}
