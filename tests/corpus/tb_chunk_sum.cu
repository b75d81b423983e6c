// Naive reduction without shared memory: each thread adds up its own contiguous chunk of
// the input into one partial sum (the host adds the partials).
// EXPECT-PASSES: coalesce|vectorize
// EXPECT: verified
#define CHUNK 24
#pragma naiveopt sizes(nchunks=300) array(in, nchunks * 24) array(partial, nchunks)
__global__ void chunkSum(const float *in, float *partial, int nchunks)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < nchunks) {
        float acc = 0.0f;
        for (int k = 0; k < CHUNK; k++)
            acc += in[t * CHUNK + k];
        partial[t] = acc;
    }
}
