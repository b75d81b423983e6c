// OpenCL SDK style row pointers into __global arrays (pointer_offsets.cu has the CUDA forms):
// '__global const float *row = A + gid * n' is read as indexed accesses of A.
// RUN: %naiveopt %s --explain -o %t.cl 2>&1 | FileCheck %s
// RUN: %naiveopt %s --no-opt | FileCheck %s --check-prefix=NOOPT
#pragma naiveopt sizes(m=61, n=39) array(A, m, n) array(x, n) array(y, m)
__kernel void matvec(__global const float *A, __global const float *x, __global float *y,
                     int m, int n)
{
    int gid = get_global_id(0);
    if (gid < m) {
        __global const float *row = A + gid * n;
        __global float *out = &y[gid];
        float dot = 0.0f;
        for (int j = 0; j < n; j++)
            dot += row[j] * x[j];
        *out = dot;
    }
}

// CHECK: matvec: remark [coalesce] applied
// CHECK: matvec: verification passed
// NOOPT: dot += A[gid * n + j] * x[j];
// NOOPT: y[gid] = dot;
