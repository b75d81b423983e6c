// A whole program in one .cu file, as tutorials hand it out: the kernel and main() with
// cudaMalloc, cudaMemcpy, the launch and the check on the host.
// EXPECT-PASSES: none
// EXPECT: verified
#include <stdio.h>
#include <stdlib.h>
#include <cuda_runtime.h>

#pragma naiveopt sizes(n=1000) array(a, n) array(b, n) array(c, n)
__global__ void add(const float *a, const float *b, float *c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        c[i] = a[i] + b[i];
}

int main(void)
{
    int n = 1000;
    size_t bytes = n * sizeof(float);
    float *h_a = (float *)malloc(bytes), *h_b = (float *)malloc(bytes), *h_c = (float *)malloc(bytes);
    for (int i = 0; i < n; i++) {
        h_a[i] = i;
        h_b[i] = 2 * i;
    }
    float *d_a, *d_b, *d_c;
    cudaMalloc(&d_a, bytes);
    cudaMalloc(&d_b, bytes);
    cudaMalloc(&d_c, bytes);
    cudaMemcpy(d_a, h_a, bytes, cudaMemcpyHostToDevice);
    cudaMemcpy(d_b, h_b, bytes, cudaMemcpyHostToDevice);
    int threads = 256;
    int blocks = (n + threads - 1) / threads;
    add<<<blocks, threads>>>(d_a, d_b, d_c, n);
    cudaMemcpy(h_c, d_c, bytes, cudaMemcpyDeviceToHost);
    int errors = 0;
    for (int i = 0; i < n; i++)
        if (h_c[i] != 3 * i)
            errors++;
    printf("%s\n", errors ? "FAILED" : "PASSED");
    cudaFree(d_a);
    cudaFree(d_b);
    cudaFree(d_c);
    free(h_a);
    free(h_b);
    free(h_c);
    return errors != 0;
}
