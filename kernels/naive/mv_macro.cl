// Matrix-vector multiply in the macro style of Yang & Zhou: C[H] = A[H][W] * B[W].
// idx/idy/tidx/tidy/bidx/bidy are provided by the optimizer. No bounds guard:
// H must be a multiple of the block size.
#define A(y,x) A[(y)*width+(x)]
#define globalDimY 1
__kernel void mv_macro(__global float *A, __global float *B, __global float *C, int width) {
    float sum = 0;
    for (int i = 0; i < width; i = i + 1) {
        float a;
        float b;
        a = A(idx, i);
        b = B[i];
        sum += a * b;
    }
    C[idx] = sum;
}
