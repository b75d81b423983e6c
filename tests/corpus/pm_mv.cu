// The paper's macro style: an accessor macro, idx used undeclared, sizes as macros and no
// bounds guard (the height is a multiple of the naive block, the width is odd).
// EXPECT-PASSES: split-reduction
// EXPECT: verified
#define WIDTH 83
#define HEIGHT 320
#define A(y,x) A[(y)*WIDTH+(x)]
#pragma naiveopt sizes(WIDTH=83, HEIGHT=320) threads(HEIGHT) block(64)
#pragma naiveopt array(A, HEIGHT, WIDTH) array(B, WIDTH) array(C, HEIGHT)
__global__ void mv(float *A, float *B, float *C) {
    float sum = 0;
    for (int i = 0; i < WIDTH; i++) {
        sum += A(idx, i) * B[i];
    }
    C[idx] = sum;
}
