// Textbook CUDA: the first kernel of every tutorial, one element per thread.
// EXPECT-PASSES: none
// EXPECT: verified
#include <cuda_runtime.h>

#pragma naiveopt sizes(numElements=1000)
#pragma naiveopt array(A, numElements) array(B, numElements) array(C, numElements)
__global__ void vectorAdd(const float *A, const float *B, float *C, int numElements)
{
    int i = blockDim.x * blockIdx.x + threadIdx.x;

    if (i < numElements)
    {
        C[i] = A[i] + B[i];
    }
}
