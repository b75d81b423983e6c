// Tutorial CUDA: a row-times-vector product over at most 64 columns, its loop bound a clamp
// (`k < min(K, 64)`) and unrolled by `#pragma unroll 4`, next to a `long long` id over doubles
// and a kernel with a needless `__syncthreads()` after its guard. Verification's estimate of
// the work at its sizes reads the clamped bound as a number (it crashed naiveopt).
// EXPECT: verified
// EXPECT-PASSES(rowdot_min): coalesce
// EXPECT-PASSES(axpy_ll): none
// EXPECT-PASSES(scale_sync): none
// XFAIL(rowdot_min): coalesce: the loop bound min(K, 64) is not an affine expression of sizes
#pragma naiveopt sizes(n=1000, M=300, K=100)
__global__ void axpy_ll(const double *x, double *y, double a, long long n)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    y[i] = a * x[i] + y[i];
}

__global__ void rowdot_min(const float *A, const float *v, float *out, int M, int K)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < M) {
        float s = 0.0f;
#pragma unroll 4
        for (int k = 0; k < min(K, 64); k++)
            s += A[r * K + k] * v[k];
        out[r] = s;
    }
}

__global__ void scale_sync(float *a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] *= 0.5f;
    __syncthreads();
}
