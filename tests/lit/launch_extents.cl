// launch-extents: an OpenCL tutorial transpose reads its row width from the launch
// (get_global_size(0)) and has no bounds guard, so the launch covers its thread space exactly:
// the width is read as that extent, the free size globalDimX, which the output takes as a
// parameter, so coalesce-writes' guarded 32x32 tiles (a grid padded past the sizes) compute
// the same. Without a pass that changes the launch (--no-opt) the kernel keeps its own
// parameters and reads the launch's size again.
// RUN: %naiveopt %s --explain -o %t.cl 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: FileCheck %s < %t.cl
// RUN: %naiveopt %s --no-opt --no-verify | FileCheck %s --check-prefix=NAIVE

typedef float elem_t;
__kernel void transpose(__global elem_t *out, __global const elem_t *in, const unsigned int rows)
{
    unsigned int x, y;
    x = get_global_id(0);
    y = get_global_id(1);
    out[x * rows + y] = in[y * get_global_size(0) + x];
}

// REMARK: transpose: remark [launch-extents] analysis: blockDim.x * gridDim.x read as globalDimX, the thread space's x extent, in 1 place(s): the kernel has no bounds guard, so its launch covers exactly that; new parameter int naiveopt_globalDimX, which the launcher passes (dropped again if no pass changes the launch)
// REMARK: transpose: remark [coalesce-writes] applied: the kernel has no bounds guard
// REMARK: transpose: verification passed: {{.*}}inferred-odd
// REMARK-NOT: failed internally

// CHECK: //   argument 3: int naiveopt_globalDimX: new parameter, globalDimX:
// CHECK-NEXT: //     the thread space's x extent, the naive kernel's get_global_size(0)
// CHECK: transpose(__global elem_t *out, __global const elem_t *in, const unsigned int rows,
// CHECK-NEXT: int naiveopt_globalDimX, int naiveopt_globalDimY) {
// CHECK: in[{{.*}}naiveopt_globalDimX

// NAIVE: transpose(__global elem_t *out, __global const elem_t *in, const unsigned int rows) {
// NAIVE-NOT: naiveopt_globalDimX
// NAIVE: in[y * (blockDimX * gridDimX) + x]
