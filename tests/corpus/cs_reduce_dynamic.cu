// CUDA samples style: the reduction whitepaper's reduce3 (the first add during the load,
// sequential addressing, `s >>= 1`), its scratch in dynamic shared memory (`extern __shared__
// float sdata[];`, sized by the launch's third argument), launched by the host function
// below it. One partial sum per block; n is not a multiple of the block.
// EXPECT-PASSES: none
// EXPECT: verified
#pragma naiveopt sizes(n=1001) threads((n + 1) / 2)
__global__ void reduce3(const float *g_idata, float *g_odata, unsigned int n)
{
    extern __shared__ float sdata[];
    unsigned int tid = threadIdx.x;
    unsigned int i = blockIdx.x * (blockDim.x * 2) + threadIdx.x;

    float mySum = (i < n) ? g_idata[i] : 0;
    if (i + blockDim.x < n)
        mySum += g_idata[i + blockDim.x];
    sdata[tid] = mySum;
    __syncthreads();

    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s)
            sdata[tid] = mySum = mySum + sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0) g_odata[blockIdx.x] = mySum;
}

void reduce(const float *d_idata, float *d_odata, unsigned int n, int threads)
{
    int blocks = (n + threads * 2 - 1) / (threads * 2);
    int smemSize = (threads <= 32) ? 2 * threads * sizeof(float) : threads * sizeof(float);
    reduce3<<<blocks, threads, smemSize>>>(d_idata, d_odata, n);
}
