// OpenCL's vloadN/vstoreN are read as the element accesses they make (translate.py), through
// an array, `a + e`, `&a[e]` or a local row pointer; the kernel verifies without pragmas and
// vectorize writes each whole group as one vector access again.
// RUN: %naiveopt %s --explain -o %t.cl 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: FileCheck %s < %t.cl
// RUN: rm -rf %t.d && %naiveopt %s --no-opt --dump-ir %t.d -o %t.no.cl
// RUN: FileCheck %s --check-prefix=CANON < %t.d/vload_cl.00-input.ir
// RUN: FileCheck %s --check-prefix=NOOPT < %t.no.cl
__kernel void vadd4(__global const float *a, __global const float *b, __global float *c, int n4)
{
    int i = get_global_id(0);
    if (i < n4) {
        __global const float *row = b + 4 * i;
        vstore4(vload4(i, a) + 2.0f * vload4(0, row), i, c);
    }
}

// REMARK: vadd4: remark [vectorize] applied: 3 vector access(es) as the input wrote them
// REMARK: vadd4: verification passed: inferred
// CHECK: float4 vstore_value1 = vload4(0, &a[4 * i]) + 2.0f * vload4(0, &b[4 * i]);
// CHECK: vstore4(vstore_value1, 0, &c[4 * i]);
// CANON: make_float4(a[4 * i], a[4 * i + 1], a[4 * i + 2], a[4 * i + 3])
// CANON: c[4 * i + 3] = vstore_value1.w;
// NOOPT: passes: none (functional only)
// NOOPT: float4 vstore_value1 = vload4(0, &a[4 * i]) + 2.0f * vload4(0, &b[4 * i]);
// NOOPT: vstore4(vstore_value1, 0, &c[4 * i]);
