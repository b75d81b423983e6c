// Kernels loaded by name (cupy's RawKernel, cuModuleGetFunction, ctypes): C linkage, so that
// the name the host looks up is not mangled. One kernel declared `extern "C"` on its own, two
// in an `extern "C" { }` block; the output keeps C linkage on each.
// EXPECT-PASSES(gemv): coalesce|vectorize
// EXPECT-PASSES(my_add): none
// EXPECT-PASSES(scale): none
// EXPECT: verified
#pragma naiveopt sizes(n=1001, rows=300, cols=77)
extern "C" __global__
void my_add(const float* x1, const float* x2, float* out, int n)
{
    int tid = blockDim.x * blockIdx.x + threadIdx.x;
    if (tid < n)
        out[tid] = x1[tid] + x2[tid];
}

extern "C" {

#pragma naiveopt array(A, rows, cols) array(x, cols) array(y, rows)
__global__ void gemv(const float *A, const float *x, float *y, int rows, int cols)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        float acc = 0.0f;
        for (int c = 0; c < cols; ++c)
            acc += A[r * cols + c] * x[c];
        y[r] = acc;
    }
}

__global__ void scale(float *v, float s, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        v[i] *= s;
}

}
