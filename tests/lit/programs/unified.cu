// Unified memory, as in "An Even Easier Introduction to CUDA": cudaMallocManaged buffers
// filled on the host, a matrix-vector product launched with an int grid and block, then
// cudaDeviceSynchronize. The rewritten launch keeps its arguments as written.
// RUN: %naiveopt %s --explain 2> %t.err | FileCheck %s
// CHECK-NOT: unverified
// CHECK: __global__ void __launch_bounds__
// CHECK: matvec_launch_from(dim3 naive_grid, dim3 naive_block,
// CHECK: int main()
// CHECK: int numBlocks = (rows + blockSize - 1) / blockSize;
// CHECK-NEXT: matvec_launch_from(numBlocks, blockSize, A, x, y, rows, cols);
// CHECK-NEXT: cudaDeviceSynchronize();
#include <iostream>
#include <math.h>

__global__
void matvec(float *A, float *x, float *y, int rows, int cols)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < rows) {
    float sum = 0;
    for (int j = 0; j < cols; j++)
      sum += A[i * cols + j] * x[j];
    y[i] = sum;
  }
}

int main()
{
  int rows = 3000, cols = 2000;
  float *A, *x, *y;
  cudaMallocManaged(&A, rows * cols * sizeof(float));
  cudaMallocManaged(&x, cols * sizeof(float));
  cudaMallocManaged(&y, rows * sizeof(float));
  for (int i = 0; i < rows * cols; i++) A[i] = 1.0f;
  for (int j = 0; j < cols; j++) x[j] = 2.0f;

  int blockSize = 256;
  int numBlocks = (rows + blockSize - 1) / blockSize;
  matvec<<<numBlocks, blockSize>>>(A, x, y, rows, cols);
  cudaDeviceSynchronize();

  float maxError = 0.0f;
  for (int i = 0; i < rows; i++)
    maxError = fmax(maxError, fabs(y[i] - 2.0f * cols));
  std::cout << "Max error: " << maxError << std::endl;

  cudaFree(A);
  cudaFree(x);
  cudaFree(y);
  return 0;
}
