// Streams: a batch of matrix transposes split over four streams, each chunk copied in,
// transposed and copied out asynchronously from pinned memory. The launch passes its stream
// as the fourth configuration argument, which the rewritten call passes on.
// RUN: %naiveopt %s --explain 2> %t.err | FileCheck %s
// CHECK-NOT: unverified
// CHECK: transpose_launch_from(dim3 naive_grid, dim3 naive_block,
// CHECK: // Host code of streams.cu, as written but for its 1 launch(es) of
// CHECK: for (int s = 0; s < NSTREAMS; ++s) {
// CHECK: transpose_launch_from(grid, threads, d_out + offset, d_in + offset, width, height, stream[s]);
// CHECK-NOT: transpose<<<
#include <cstdio>
#include <cuda_runtime.h>

#define NSTREAMS 4

__global__ void transpose(float *odata, const float *idata, int width, int height)
{
    unsigned int x = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < width && y < height)
        odata[x * height + y] = idata[y * width + x];
}

int main()
{
    const int width = 1000, height = 600, batch = 8;
    const size_t matrix = (size_t)width * height;
    float *h_in, *h_out, *d_in, *d_out;
    cudaMallocHost((void **)&h_in, batch * matrix * sizeof(float));
    cudaMallocHost((void **)&h_out, batch * matrix * sizeof(float));
    cudaMalloc((void **)&d_in, batch * matrix * sizeof(float));
    cudaMalloc((void **)&d_out, batch * matrix * sizeof(float));
    for (size_t i = 0; i < batch * matrix; ++i)
        h_in[i] = (float)(i % 1013);

    cudaStream_t stream[NSTREAMS];
    for (int s = 0; s < NSTREAMS; ++s)
        cudaStreamCreate(&stream[s]);
    dim3 threads(16, 16);
    dim3 grid((width + 15) / 16, (height + 15) / 16);
    for (int b = 0; b < batch; b += NSTREAMS) {
        for (int s = 0; s < NSTREAMS; ++s) {
            size_t offset = (b + s) * matrix;
            cudaMemcpyAsync(d_in + offset, h_in + offset, matrix * sizeof(float),
                            cudaMemcpyHostToDevice, stream[s]);
            transpose<<<grid, threads, 0, stream[s]>>>(d_out + offset, d_in + offset, width, height);
            cudaMemcpyAsync(h_out + offset, d_out + offset, matrix * sizeof(float),
                            cudaMemcpyDeviceToHost, stream[s]);
        }
    }
    cudaDeviceSynchronize();
    int bad = 0;
    for (int m = 0; m < batch; ++m)
        for (int y = 0; y < height; y += 7)
            for (int x = 0; x < width; x += 11)
                bad += h_out[m * matrix + (size_t)x * height + y] != h_in[m * matrix + (size_t)y * width + x];
    printf("%s\n", bad ? "FAILED" : "PASSED");
    for (int s = 0; s < NSTREAMS; ++s)
        cudaStreamDestroy(stream[s]);
    cudaFreeHost(h_in);
    cudaFreeHost(h_out);
    cudaFree(d_in);
    cudaFree(d_out);
    return bad != 0;
}
