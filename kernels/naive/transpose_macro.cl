// Matrix transpose in the macro style of Yang & Zhou: B[W][H] = A[H][W]^T.
// idx/idy/tidx/tidy/bidx/bidy are provided by the optimizer. No bounds guard:
// the sizes must be multiples of the block size.
#define A(y,x) A[(y)*width+(x)]
#define B(y,x) B[(y)*height+(x)]
__kernel void transpose_macro(__global float *A, __global float *B, int width, int height) {
    float a;
    a = A(idy, idx);
    B(idx, idy) = a;
}
