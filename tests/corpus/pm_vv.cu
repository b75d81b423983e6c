// The paper's macro style: elementwise vector product, nothing declared, no guard.
// EXPECT-PASSES: none
// EXPECT: verified
#pragma naiveopt sizes(N=1280) threads(N) block(256) array(A, N) array(B, N) array(C, N)
__global__ void vv(float *A, float *B, float *C) {
    C[idx] = A[idx] * B[idx];
}
