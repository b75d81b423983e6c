// A whole program in the style of the CUDA samples: a matrix product with cudaMalloc and
// cudaMemcpy, an error-checking macro, event timing and a host check. naiveopt optimizes the
// kernel in place and rewrites its launch to call mm_launch; every other line of the host
// code stays as written.
// RUN: %naiveopt %s --explain 2> %t.err | FileCheck %s
// RUN: %naiveopt %s | FileCheck %s --check-prefix=HOST
// CHECK-NOT: unverified
// CHECK: __launch_bounds__
// CHECK: __trap();
// CHECK: static inline cudaError_t matmul_launch(const float *A, const float *B, float *C,
// CHECK: static inline cudaError_t matmul_launch_from(dim3 naive_grid, dim3 naive_block,
// CHECK: // Host code of malloc_memcpy.cu, as written but for its 1 launch(es) of
// HOST: #define CHECK(call)
// HOST: cudaEventRecord(start);
// HOST-NEXT: matmul_launch_from(grid, block, d_A, d_B, d_C, n);
// HOST-NEXT: CHECK(cudaGetLastError());
// HOST-NOT: matmul<<<
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <cuda_runtime.h>

#define CHECK(call)                                                             \
    do {                                                                        \
        cudaError_t err_ = (call);                                              \
        if (err_ != cudaSuccess) {                                              \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__,                  \
                    cudaGetErrorString(err_));                                  \
            exit(1);                                                            \
        }                                                                       \
    } while (0)

#define TILE 16

__global__ void matmul(const float *A, const float *B, float *C, int n)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < n && col < n) {
        float acc = 0.0f;
        for (int k = 0; k < n; ++k)
            acc += A[row * n + k] * B[k * n + col];
        C[row * n + col] = acc;
    }
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 500;
    size_t bytes = (size_t)n * n * sizeof(float);
    float *h_A = (float *)malloc(bytes), *h_B = (float *)malloc(bytes);
    float *h_C = (float *)malloc(bytes);
    for (int i = 0; i < n * n; i++) {
        h_A[i] = (float)(i % 7) / 7.0f;
        h_B[i] = (float)(i % 5) / 5.0f;
    }
    float *d_A, *d_B, *d_C;
    CHECK(cudaMalloc(&d_A, bytes));
    CHECK(cudaMalloc(&d_B, bytes));
    CHECK(cudaMalloc(&d_C, bytes));
    CHECK(cudaMemcpy(d_A, h_A, bytes, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_B, h_B, bytes, cudaMemcpyHostToDevice));

    dim3 block(TILE, TILE);
    dim3 grid((n + TILE - 1) / TILE, (n + TILE - 1) / TILE);
    cudaEvent_t start, stop;
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
    cudaEventRecord(start);
    matmul<<<grid, block>>>(d_A, d_B, d_C, n);
    CHECK(cudaGetLastError());
    cudaEventRecord(stop);
    CHECK(cudaEventSynchronize(stop));
    float ms = 0.0f;
    cudaEventElapsedTime(&ms, start, stop);
    CHECK(cudaMemcpy(h_C, d_C, bytes, cudaMemcpyDeviceToHost));

    double worst = 0.0;
    for (int r = 0; r < n; r += 37)
        for (int c = 0; c < n; c += 41) {
            double ref = 0.0;
            for (int k = 0; k < n; k++)
                ref += (double)h_A[r * n + k] * h_B[k * n + c];
            worst = fmax(worst, fabs(ref - h_C[r * n + c]));
        }
    printf("n=%d time=%.3f ms max error=%g %s\n", n, ms, worst, worst < 1e-2 ? "PASSED" : "FAILED");
    cudaFree(d_A);
    cudaFree(d_B);
    cudaFree(d_C);
    free(h_A);
    free(h_B);
    free(h_C);
    return worst < 1e-2 ? 0 : 1;
}
