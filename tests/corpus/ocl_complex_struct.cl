// OpenCL complex arithmetic on an array of structs (`typedef struct { float re; float im; }
// cfloat;`): a complex matrix-vector product y = A x, a work-item per row, A row-major. The
// array of structs is read as the floats it holds (A[(i * n + j) * 2 + k]); the row walk
// strides by 2 floats, which the coalescing pass does not stage yet.
// EXPECT-PASSES: coalesce
// XFAIL: coalesce: A(2*idx, 2*j): uncoalesced (stride 2*n in x), not staged: not of the form A(id + c, j + c) or A(j + c, id + c)
// EXPECT: verified
#pragma naiveopt sizes(m=45, n=37)
typedef struct { float re; float im; } cfloat;

__kernel void cgemv(__global const cfloat *A, __global const cfloat *x, __global cfloat *y,
                    int m, int n)
{
    int i = get_global_id(0);
    if (i < m) {
        float re = 0.0f, im = 0.0f;
        for (int j = 0; j < n; j++) {
            re += A[i * n + j].re * x[j].re - A[i * n + j].im * x[j].im;
            im += A[i * n + j].re * x[j].im + A[i * n + j].im * x[j].re;
        }
        y[i].re = re;
        y[i].im = im;
    }
}
