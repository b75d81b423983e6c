// Grid-stride histogram privatized per block (CUDA by Example, chapter 9): each block counts
// into a __shared__ histogram with atomicAdd, then adds it into the global one; the launch is
// a fixed grid (the kernel is written for 256-thread blocks: threadIdx.x names a bin). The
// passes keep kernels with atomics as written; in OpenCL the shared atomics are __local ones.
// EXPECT-PASSES: none
// EXPECT: verified
#pragma naiveopt sizes(size=5003) threads(2048) array(buffer, size) array(histo, 256)

__global__ void histo_kernel(unsigned char *buffer, long size, unsigned int *histo)
{
    __shared__ unsigned int temp[256];
    temp[threadIdx.x] = 0;
    __syncthreads();

    int i = threadIdx.x + blockIdx.x * blockDim.x;
    int offset = blockDim.x * gridDim.x;
    while (i < size) {
        atomicAdd(&temp[buffer[i]], 1);
        i += offset;
    }
    __syncthreads();

    atomicAdd(&(histo[threadIdx.x]), temp[threadIdx.x]);
}
