// OpenCL style: a row-major index helper and a read helper taking the matrix pointer
// (`inline` functions), a work-item per row of a matrix-vector product, int sizes.
// EXPECT-PASSES: coalesce|vectorize
// EXPECT: verified
inline int idx2(int row, int col, int ncols)
{
    return row * ncols + col;
}

inline float at(__global const float *m, int row, int col, int ncols)
{
    return m[idx2(row, col, ncols)];
}

#pragma naiveopt sizes(rows=300, cols=77) array(A, rows, cols) array(x, cols) array(y, rows)
__kernel void matvec(__global const float *A, __global const float *x, __global float *y,
                     int rows, int cols)
{
    int r = get_global_id(0);
    if (r < rows) {
        float acc = 0.0f;
        for (int c = 0; c < cols; c++)
            acc += at(A, r, c, cols) * x[c];
        y[r] = acc;
    }
}
