// A kernel launched in a loop: Jacobi relaxation on a 2-D grid, swapping the input and
// output buffers each iteration (std::swap), the launch inside a helper function that the
// loop calls. Each launch of the loop is rewritten; the swap and the loop stay as written.
// RUN: %naiveopt %s --cost-model unlimited --explain 2> %t.err | FileCheck %s
// CHECK-NOT: unverified
// CHECK: jacobi_launch_from(dim3 naive_grid, dim3 naive_block,
// CHECK: static void relax(float *u, float *v, int nx, int ny, int iterations)
// CHECK: for (int it = 0; it < iterations; ++it) {
// CHECK-NEXT: jacobi_launch_from(grid, block, u, v, nx, ny); // one sweep
// CHECK-NEXT: std::swap(u, v);
#include <algorithm>
#include <cstdio>
#include <vector>

__global__ void jacobi(const float *in, float *out, int nx, int ny)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int j = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= 1 && i < nx - 1 && j >= 1 && j < ny - 1)
        out[j * nx + i] = 0.25f * (in[j * nx + i - 1] + in[j * nx + i + 1] +
                                   in[(j - 1) * nx + i] + in[(j + 1) * nx + i]);
}

static void relax(float *u, float *v, int nx, int ny, int iterations)
{
    dim3 block(32, 8);
    dim3 grid((nx + block.x - 1) / block.x, (ny + block.y - 1) / block.y);
    for (int it = 0; it < iterations; ++it) {
        jacobi<<<grid, block>>>(u, v, nx, ny); // one sweep
        std::swap(u, v);
    }
    cudaDeviceSynchronize();
}

int main()
{
    const int nx = 513, ny = 257;
    std::vector<float> h(nx * ny, 0.0f);
    for (int i = 0; i < nx; ++i)
        h[i] = 1.0f;                      // a hot top edge
    float *u, *v;
    cudaMalloc(&u, h.size() * sizeof(float));
    cudaMalloc(&v, h.size() * sizeof(float));
    cudaMemcpy(u, h.data(), h.size() * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemcpy(v, h.data(), h.size() * sizeof(float), cudaMemcpyHostToDevice);
    relax(u, v, nx, ny, 100);
    cudaMemcpy(h.data(), u, h.size() * sizeof(float), cudaMemcpyDeviceToHost);
    printf("u[1][nx/2] = %f\n", h[nx + nx / 2]);
    cudaFree(u);
    cudaFree(v);
    return 0;
}
