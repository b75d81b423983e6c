// 2-D convolution in the macro style of Yang & Zhou:
// C[y][x] = sum_{i<K,j<K} A[y+i][x+j] * F[i][j], A [H+K-1][W+K-1], F [K][K], C [H][W].
// idx/idy/tidx/tidy/bidx/bidy are provided by the optimizer. No bounds guard:
// H and W must be multiples of the block size.
#define A(y,x) A[(y)*(width+ksize-1)+(x)]
#define F(y,x) F[(y)*ksize+(x)]
#define C(y,x) C[(y)*width+(x)]
__kernel void conv_macro(__global float *A, __global float *F, __global float *C, int width, int ksize) {
    float sum = 0;
    for (int i = 0; i < ksize; i = i + 1) {
        for (int j = 0; j < ksize; j = j + 1) {
            float a;
            float f;
            a = A(idy + i, idx + j);
            f = F(i, j);
            sum += a * f;
        }
    }
    C(idy, idx) = sum;
}
