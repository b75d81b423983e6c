// PolyBench's typedef'd element type for arrays, scalars, locals and casts, and a pointer
// typedef (written as the pointer it names): the analyses see float (register promotion fires on the accumulation into c), the
// output keeps the user's names and declares them.
// RUN: %naiveopt %s --explain -o %t.cu 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// RUN: FileCheck %s < %t.cu
// RUN: %naiveopt %s --target opencl --no-verify | FileCheck %s --check-prefix=OPENCL
typedef float DATA_TYPE;
typedef DATA_TYPE *DATA_PTR;

#pragma naiveopt sizes(n=45, m=37) array(a, n, m) array(x, m) array(c, n) scalar(alpha, 1.5)
__global__ void scaled_mv(const DATA_TYPE *a, const DATA_TYPE *x, DATA_PTR c, DATA_TYPE alpha,
                          int n, int m)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int j;
        c[i] = (DATA_TYPE)0;
        for (j = 0; j < m; j++) {
            DATA_TYPE t = alpha * a[i * m + j];
            c[i] += t * x[j];
        }
    }
}

// EXPLAIN: scaled_mv: remark [register-promotion] applied
// EXPLAIN: scaled_mv: verification passed
// CHECK: // scaled_mv: passes: register-promotion
// CHECK: typedef float DATA_TYPE;
// CHECK-NOT: DATA_PTR
// CHECK: __global__ void __launch_bounds__({{64|128|256}}{{(, [0-9]+)?}})
// CHECK: scaled_mv(const DATA_TYPE *a, const DATA_TYPE *x, DATA_TYPE *c, DATA_TYPE alpha,{{[[:space:]]*}}int n, int m) {
// CHECK: c[i] = (DATA_TYPE)0;
// CHECK: DATA_TYPE t = alpha * {{a\[i \* m \+ j\]|s_a\[tidx\]\[jj\]}};

// OPENCL: typedef float DATA_TYPE;
// OPENCL: __kernel {{(__attribute__\(\(reqd_work_group_size\((64|128|256), 1, 1\)\)\) )?}}void
// OPENCL: scaled_mv(__global const DATA_TYPE *a, __global const DATA_TYPE *x,{{[[:space:]]*}}__global DATA_TYPE *c,{{[[:space:]]*}}DATA_TYPE alpha, int n, int m) {
// OPENCL: DATA_TYPE t = alpha * {{a\[i \* m \+ j\]|s_a\[tidx\]\[jj\]}};
