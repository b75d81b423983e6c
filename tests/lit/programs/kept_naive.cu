// Launches naiveopt cannot rewrite safely: a kernel launched through cudaLaunchKernel, one
// whose argument is computed from the launch's own grid, and one launched from a macro.
// Each kernel is kept naive (no optimization pass runs on it), its launches stay exactly as
// written, and a remark says why.
// RUN: %naiveopt %s --explain 2> %t.err | FileCheck %s
// RUN: FileCheck %s --check-prefix=REMARK < %t.err
// CHECK-NOT: __launch_bounds__
// CHECK-NOT: _launch_from
// CHECK: // Host code of kept_naive.cu, passed through unchanged
// CHECK: #define LAUNCH_T(g, b, ...) transpose<<<g, b>>>(__VA_ARGS__)
// CHECK: cudaLaunchKernel((const void *)matmul, grid, block, args, 0, 0);
// CHECK: scale<<<blocks, threads>>>(C, n * n, blocks * threads);
// CHECK: LAUNCH_T(grid, block, A, C, n, n);
// REMARK-DAG: matmul: remark [host-launches] missed: kept naive, as the host code launches it (line {{[0-9]+}}: 'matmul' is used other than in a launch
// REMARK-DAG: scale: remark [host-launches] missed: kept naive, as the host code launches it (line {{[0-9]+}}: argument 3 of the launch of 'scale' (blocks * threads) reads the launch's geometry (blocks, threads)
// REMARK-DAG: transpose: remark [host-launches] missed: kept naive, as the host code launches it (line {{[0-9]+}}: 'transpose' is named in a preprocessor line
// REMARK-DAG: matmul: remark [thread-merge] missed: kept naive
#include <cstdio>
#include <cuda_runtime.h>

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

// a scale factor the host computes from the launch's own geometry
__global__ void scale(float *x, int n, int stride)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] *= (float)(stride % 7);
}

__global__ void transpose(float *out, const float *in, int w, int h)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h)
        out[x * h + y] = in[y * w + x];
}

#define LAUNCH_T(g, b, ...) transpose<<<g, b>>>(__VA_ARGS__)

int main()
{
    int n = 256;
    float *A, *B, *C;
    cudaMalloc(&A, n * n * sizeof(float));
    cudaMalloc(&B, n * n * sizeof(float));
    cudaMalloc(&C, n * n * sizeof(float));
    dim3 block(16, 16), grid(n / 16, n / 16);
    void *args[] = {&A, &B, &C, &n};
    cudaLaunchKernel((const void *)matmul, grid, block, args, 0, 0);

    int blocks = 32, threads = 256;
    scale<<<blocks, threads>>>(C, n * n, blocks * threads);
    LAUNCH_T(grid, block, A, C, n, n);
    printf("%s\n", cudaGetErrorString(cudaDeviceSynchronize()));
    cudaFree(A);
    cudaFree(B);
    cudaFree(C);
    return 0;
}
