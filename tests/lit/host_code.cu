// A whole program: the kernel next to main() (cudaMallocManaged, the launch, printf). The
// kernel is optimized and verified; the host code is not naiveopt's: it follows the kernels
// in a CUDA output exactly as written, and an OpenCL output says it is left out.
// RUN: %naiveopt %s -o %t.cu
// RUN: FileCheck %s < %t.cu
// RUN: %naiveopt %s --target opencl --no-verify | FileCheck %s --check-prefix=OPENCL
#include <stdio.h>

#pragma naiveopt sizes(n=1000) array(x, n) array(y, n)
__global__ void scale(const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 2.0f * x[i];
}

int main(void)
{
    const int n = 1000;
    float *x, *y;
    cudaMallocManaged(&x, n * sizeof(float));
    cudaMallocManaged(&y, n * sizeof(float));
    for (int i = 0; i < n; i++) x[i] = i;
    scale<<<(n + 255) / 256, 256>>>(x, y, n);
    cudaDeviceSynchronize();
    printf("%f\n", y[n - 1]);
    return 0;
}

// CHECK-NOT: unverified
// CHECK: #include <stdio.h>
// CHECK: __global__ void scale(const float *x, float *y, int n) {
// CHECK: // Host code of host_code.cu, passed through unchanged
// CHECK: int main(void)
// CHECK-NEXT: {
// CHECK: for (int i = 0; i < n; i++) x[i] = i;
// CHECK-NEXT: scale<<<(n + 255) / 256, 256>>>(x, y, n);

// OPENCL: // host code of host_code.cu left out: an OpenCL C file holds device code only
// OPENCL-NOT: #include
// OPENCL: __kernel void scale(
// OPENCL-NOT: main
