// The paper's macro style mixed with int size parameters and a guard on idx/idy.
// EXPECT-PASSES: thread-block-merge, thread-merge
// EXPECT: verified
#define A(y,x) A[(y)*wA+(x)]
#define B(y,x) B[(y)*wB+(x)]
#define C(y,x) C[(y)*wB+(x)]
#pragma naiveopt sizes(hA=41, wA=35, wB=53) block(16, 16)
#pragma naiveopt array(A, hA, wA) array(B, wA, wB) array(C, hA, wB)
__global__ void mm(float *A, float *B, float *C, int hA, int wA, int wB) {
    if (idx < wB && idy < hA) {
        float sum = 0;
        for (int i = 0; i < wA; i++)
            sum += A(idy, i) * B(i, idx);
        C(idy, idx) = sum;
    }
}
