// A 1-D convolution with its mask in file-scope __constant__ memory (issue 11): CUDA output
// keeps the symbol before the kernel and names it in the header (the host fills it with
// cudaMemcpyToSymbol); OpenCL output takes it as an extra __constant argument after the
// kernel's own, and reads it as written while the stencil pass stages the input.
// (--cost-model unlimited: staged wherever legal; whether a 3-tap filter pays is
// the stencil tests' question, not this file's)
// RUN: %naiveopt %s --cost-model unlimited | FileCheck %s
// RUN: %naiveopt %s --cost-model unlimited --target opencl | FileCheck %s --check-prefix=CL

#define MASK_WIDTH 5
#pragma naiveopt sizes(Width=1001) array(N, Width) array(P, Width)

__constant__ float M[MASK_WIDTH];

__global__ void convolution_1D(float *N, float *P, int Width) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < Width) {
        float Pvalue = 0;
        int N_start_point = i - (MASK_WIDTH / 2);
        for (int j = 0; j < MASK_WIDTH; j++) {
            if (N_start_point + j >= 0 && N_start_point + j < Width) {
                Pvalue += N[N_start_point + j] * M[j];
            }
        }
        P[i] = Pvalue;
    }
}

// CHECK: // convolution_1D: passes: stencil
// CHECK: //   constant data: __constant__ float M[MASK_WIDTH], filled by the host:
// CHECK-NEXT: //     cudaMemcpyToSymbol(M, host_M, MASK_WIDTH * sizeof(float))
// CHECK: #define MASK_WIDTH 5
// CHECK: {{^}}__constant__ float M[MASK_WIDTH];
// CHECK-EMPTY:
// CHECK-NEXT: __global__ void __launch_bounds__(256{{(, [0-9]+)?}}) convolution_1D(float *N, float *P, int Width) {
// CHECK: __shared__ float s_N
// CHECK: s_N[0][{{j|j_0_0}} + tidx] * M[{{j|j_0_0}}];

// CL: // convolution_1D: passes: stencil
// CL: //   argument 3: __constant float *M: a buffer of MASK_WIDTH float
// CL-NEXT: //     (the data of the input's __constant__ float M[MASK_WIDTH])
// CL-NOT: {{^}}__constant float M
// CL: __kernel __attribute__((reqd_work_group_size(256, 1, 1))) void
// CL: convolution_1D(__global float *N, __global float *P, int Width,{{[[:space:]]*}}__constant float *M) {
// CL: s_N[0][{{j|j_0_0}} + tidx] * M[{{j|j_0_0}}];
