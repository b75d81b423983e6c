// Two kernels sharing data: a layer of a small network, y = relu(W x + b) for a batch, as
// a matrix product into a device buffer and an elementwise bias and ReLU over it. Each
// launch is rewritten where its kernel's launch changed and kept where it did not.
// RUN: %naiveopt %s --explain 2> %t.err | FileCheck %s
// RUN: FileCheck %s --check-prefix=REMARK < %t.err
// CHECK-NOT: unverified
// CHECK: gemm_launch_from(dim3 naive_grid, dim3 naive_block,
// CHECK: void layer_forward(
// CHECK: gemm_launch_from(grid, block, d_W, d_X, d_Y, out_features, batch, in_features);
// CHECK-NEXT: bias_relu<<<(out_features * batch + 255) / 256, 256>>>(d_Y, d_b, out_features, batch);
// REMARK: gemm: remark [host-launches] analysis: 1 launch(es) in the host code (line {{[0-9]+}}) now call gemm_launch_from
// REMARK: bias_relu: remark [host-launches] analysis: 1 launch(es) in the host code (line {{[0-9]+}}) kept as written
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

// Y[M][N] = W[M][K] * X[K][N]
__global__ void gemm(const float *W, const float *X, float *Y, int M, int N, int K)
{
    int n = blockIdx.x * blockDim.x + threadIdx.x;
    int m = blockIdx.y * blockDim.y + threadIdx.y;
    if (m < M && n < N) {
        float acc = 0.0f;
        for (int k = 0; k < K; k++)
            acc += W[m * K + k] * X[k * N + n];
        Y[m * N + n] = acc;
    }
}

__global__ void bias_relu(float *Y, const float *b, int M, int N)
{
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < M * N) {
        float v = Y[idx] + b[idx / N];
        Y[idx] = v > 0.0f ? v : 0.0f;
    }
}

void layer_forward(const float *d_W, const float *d_b, const float *d_X, float *d_Y,
                   int out_features, int in_features, int batch)
{
    dim3 block(16, 16);
    dim3 grid((batch + 15) / 16, (out_features + 15) / 16);
    gemm<<<grid, block>>>(d_W, d_X, d_Y, out_features, batch, in_features);
    bias_relu<<<(out_features * batch + 255) / 256, 256>>>(d_Y, d_b, out_features, batch);
}

int main()
{
    const int in_features = 784, out_features = 300, batch = 64;
    float *d_W, *d_b, *d_X, *d_Y;
    cudaMalloc(&d_W, sizeof(float) * out_features * in_features);
    cudaMalloc(&d_b, sizeof(float) * out_features);
    cudaMalloc(&d_X, sizeof(float) * in_features * batch);
    cudaMalloc(&d_Y, sizeof(float) * out_features * batch);
    cudaMemset(d_W, 0, sizeof(float) * out_features * in_features);
    cudaMemset(d_b, 0, sizeof(float) * out_features);
    cudaMemset(d_X, 0, sizeof(float) * in_features * batch);
    layer_forward(d_W, d_b, d_X, d_Y, out_features, in_features, batch);
    cudaError_t err = cudaDeviceSynchronize();
    printf("%s\n", cudaGetErrorString(err));
    cudaFree(d_W);
    cudaFree(d_b);
    cudaFree(d_X);
    cudaFree(d_Y);
    return err != cudaSuccess;
}
