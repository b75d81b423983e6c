// loop-iterators: two sibling loops share the C89 iterator j (the second one with a `<=` bound
// and a `j += 1` step); each loop now declares its own, and the shared declaration goes.
// RUN: %naiveopt %s --explain -o %t.cl 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: %naiveopt %s --no-opt --no-verify | FileCheck %s

#pragma naiveopt sizes(nx=77, ny=93) array(A, nx, ny) array(x, ny) array(y, nx) array(z, nx)
__kernel void two_sums(__global const float *A, __global const float *x, __global float *y,
                       __global float *z, int nx, int ny)
{
    int i = get_global_id(0);
    int j;

    if (i < nx)
    {
        y[i] = 0;
        for (j = 0; j < ny; j++)
            y[i] += A[i * ny + j] * x[j];
        z[i] = 0;
        for (j = 0; j <= ny - 1; j += 1)
            z[i] += A[i * ny + j];
    }
}

// REMARK: two_sums: remark [loop-iterators] applied: 2 loop(s) declare their iterator: for (int j = 0; ...); for (int j = 0; ...) (the declaration of j before them removed: nothing else reads it)
// REMARK: two_sums: remark [loops] analysis: 2 loop(s), 2 canonical
// REMARK: two_sums: remark [coalesce] applied:
// REMARK: two_sums: verification passed

// CHECK: int i = idx;
// CHECK-NOT: int j;
// CHECK: for (int j = 0; j < ny; j++) {
// CHECK: for (int j = 0; j <= ny - 1; j += 1) {
