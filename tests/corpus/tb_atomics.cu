// Textbook atomics: a 256-bin histogram of bytes (`atomicAdd(&bins[in[i]], 1)`), a dot product
// summed into one float (`atomicAdd(result, a[i] * b[i])`, the address a bare pointer), row
// sums of a double matrix by one thread per element (`atomicAdd(&y[row], ...)`), a maximum
// into one int (`atomicMax`) and a counter wrapping at a limit (`atomicInc(count, limit)`).
// The passes keep kernels with atomics as written; OpenCL has no float atomic add, nor
// CUDA's wrapping increment: those become compare-and-swap loops there.
// EXPECT-PASSES: none
// EXPECT: verified
#pragma naiveopt sizes(n=3001, rows=37, cols=45) array(in, n) array(bins, 256)
#pragma naiveopt array(a, n) array(b, n) array(result, 1) array(A, rows, cols) array(y, rows)
#pragma naiveopt array(v, n) array(best, 1) array(count, 1)

__global__ void histogram(const unsigned char *in, unsigned int *bins, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicAdd(&bins[in[i]], 1);
}

__global__ void dot(const float *a, const float *b, float *result, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicAdd(result, a[i] * b[i]);
}

__global__ void row_sums(const double *A, double *y, int rows, int cols)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < rows && col < cols)
        atomicAdd(&y[row], A[row * cols + col]);
}

__global__ void max_value(const int *v, int *best, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicMax(best, v[i]);
}

__global__ void wrap_count(const int *v, unsigned int *count, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && v[i] > 0)
        atomicInc(count, 1000u);
}
