// merge-guards: Rodinia's k-means ends its kernels with a `return;` after the guard; it does
// nothing, and removed, the guard is the kernel's last statement again, so coalesce stages
// the row each thread reads (before: "the loop is not at the top level of the kernel or its
// guard").
// RUN: %naiveopt %s --explain -o %t.cu 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: %naiveopt %s --no-opt --no-verify | FileCheck %s

__global__ void invert_mapping(float *input, float *output, int npoints, int nfeatures)
{
    int point_id = threadIdx.x + blockDim.x * blockIdx.x;
    int i;

    if (point_id < npoints) {
        for (i = 0; i < nfeatures; i++)
            output[point_id + npoints * i] = input[point_id * nfeatures + i];
        return;
    }
    return;
}

// REMARK: invert_mapping: remark [merge-guards] applied: the return; ending the kernel removed; the return; ending the guard's body removed
// REMARK: invert_mapping: remark [coalesce] applied: staged in shared memory: input(idx, i)
// REMARK: invert_mapping: verification passed: {{.*}}inferred-odd

// CHECK-LABEL: __global__ void invert_mapping(
// CHECK: output[point_id + npoints * i] = input[point_id * nfeatures + i];
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NOT: return;
