// The paper's macro style: transposed matrix-vector product, each thread a column, idx
// undeclared and the loop written `i = i + 1`.
// EXPECT-PASSES: split-reduction
// EXPECT: verified
#define WIDTH 192
#define HEIGHT 77
#define A(y,x) A[(y)*WIDTH+(x)]
#pragma naiveopt sizes(WIDTH=192, HEIGHT=77) threads(WIDTH) block(64)
#pragma naiveopt array(A, HEIGHT, WIDTH) array(B, HEIGHT) array(C, WIDTH)
__global__ void tmv(float *A, float *B, float *C) {
    float sum = 0;
    for (int i = 0; i < HEIGHT; i = i + 1) {
        sum += A(i, idx) * B[i];
    }
    C[idx] = sum;
}
