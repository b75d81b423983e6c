// Matrix-matrix multiply in the macro style of Yang & Zhou:
// C[HEIGHT_A][WIDTH_B] = A[HEIGHT_A][WIDTH_A] * B[WIDTH_A][WIDTH_B].
// idx/idy/tidx/tidy/bidx/bidy are provided by the optimizer. No bounds guard:
// the sizes must be multiples of the block size. Widths are compile-time macros (-D).
#ifndef WIDTH_A
#define WIDTH_A 4096
#endif
#ifndef WIDTH_B
#define WIDTH_B 4096
#endif
#define A(y,x) A[(y)*WIDTH_A+(x)]
#define B(y,x) B[(y)*WIDTH_B+(x)]
#define C(y,x) C[(y)*WIDTH_B+(x)]
__kernel void mm_macro(__global float *A, __global float *B, __global float *C) {
    float sum = 0;
    for (int i = 0; i < WIDTH_A; i = i + 1) {
        float a;
        float b;
        a = A(idy, i);
        b = B(i, idx);
        sum += a * b;
    }
    C(idy, idx) = sum;
}
