// Grid-stride loop: per-thread partial dot products, no shared memory; the host sums partial.
// EXPECT-PASSES: none
// EXPECT: verified
#pragma naiveopt sizes(n=7001, nthreads=512) threads(nthreads)
#pragma naiveopt array(a, n) array(b, n) array(partial, nthreads)
__global__ void dot_partial(const float *a, const float *b, float *partial, int n, int nthreads)
{
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    float s = 0.0f;
    for (int i = tid; i < n; i += nthreads)
        s += a[i] * b[i];
    if (tid < nthreads)
        partial[tid] = s;
}
