// ML style (PyTorch/llm.c extensions): small math helpers as __device__ function templates
// (`template <typename scalar_t> __device__ scalar_t ...`), called from a kernel template over
// the element type that the host launches for float and double, one row per thread: the
// helpers are concrete only inside the kernel's instances (deduced there), and one calls
// another. Each instance called is a helper of its own (gelu_float, gelu_double, ...).
// EXPECT-PASSES: coalesce
// EXPECT: verified
#include <cuda_runtime.h>

template <typename scalar_t>
__device__ __forceinline__ scalar_t cube(scalar_t x)
{
    return x * x * x;
}

template <typename scalar_t>
__device__ __forceinline__ scalar_t gelu(scalar_t x)
{
    const scalar_t k = (scalar_t)0.7978845608;
    return (scalar_t)0.5 * x * ((scalar_t)1 + tanh(k * (x + (scalar_t)0.044715 * cube(x))));
}

#pragma naiveopt sizes(rows=45, cols=37)
template <typename scalar_t>
__global__ void bias_gelu_rows(const scalar_t *__restrict__ in, const scalar_t *__restrict__ bias,
                               scalar_t *__restrict__ out, int rows, int cols)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows)
        return;
    for (int c = 0; c < cols; ++c)
        out[r * cols + c] = gelu(in[r * cols + c] + bias[c]);
}

void bias_gelu(const float *in, const float *bias, float *out, const double *ind,
               const double *biasd, double *outd, int rows, int cols)
{
    int threads = 128;
    int blocks = (rows + threads - 1) / threads;
    bias_gelu_rows<float><<<blocks, threads>>>(in, bias, out, rows, cols);
    bias_gelu_rows<double><<<blocks, threads>>>(ind, biasd, outd, rows, cols);
}
