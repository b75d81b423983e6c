// CUDA samples / cuFFT style: a spectrum multiplied point by point and scaled, in the
// complex numbers of <cuComplex.h> (`cuFloatComplex`, `cuCmulf`, `make_cuFloatComplex`,
// `cuCrealf`), over a grid-stride loop, as simpleCUFFT's ComplexPointwiseMulAndScale writes
// it. The file was refused ("unknown type name 'cuFloatComplex' (naiveopt does not read
// <cuComplex.h>...)").
// EXPECT-PASSES: none
// EXPECT: verified
#include <cuComplex.h>

#pragma naiveopt sizes(size=3001)
static __global__ void ComplexPointwiseMulAndScale(cuFloatComplex *a, const cuFloatComplex *b,
                                                   int size, float scale)
{
    const int numThreads = blockDim.x * gridDim.x;
    const int threadID = blockIdx.x * blockDim.x + threadIdx.x;
    for (int i = threadID; i < size; i += numThreads) {
        cuFloatComplex p = cuCmulf(a[i], b[i]);
        a[i] = make_cuFloatComplex(scale * cuCrealf(p), scale * cuCimagf(p));
    }
}
