// A switch is the if/else chain it means (frontend/translate.py): each group of case labels
// a test of the value, held in a local unless it is a plain variable, the default the final
// else; a braced case ending in continue, a break of an inner loop and a last case without
// break are kept. The naive program is this OpenCL file with its switch, so verification
// checks the lowering against the real semantics; CUDA output has the chain too.
// RUN: %naiveopt %s --explain -o %t.cl 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: FileCheck %s < %t.cl
// RUN: %naiveopt %s --target cuda -o %t.cu 2>&1 | FileCheck %s --check-prefix=QUIET --allow-empty
#define MODE_A 3
__kernel void ops(__global const int *op, __global const float *a, __global float *out, int n,
                  int m)
{
    int i = get_global_id(0);
    if (i < n) {
        float acc = 0.0f;
        for (int k = 0; k < m; k++) {
            switch (op[(i + k) % n] & 7) {
            case 0:
            case 1:
                acc += a[i];
                break;
            default:
                acc -= 1.0f;
                break;
            case MODE_A: {
                float t = a[i] * 2.0f;
                acc *= t;
                continue;
            }
            case 4:
                for (int r = 0; r < 3; r++) {
                    if (r == 1)
                        break;
                    acc += 0.5f;
                }
                break;
            case 6:
                acc = -acc;
            }
            acc += 0.25f;
        }
        out[i] = acc;
    }
}

// REMARK: ops: verification passed
// CHECK: int naiveopt_switch1 = op[(i + k) % n] & 7;
// CHECK-NEXT: if (naiveopt_switch1 == 0 || naiveopt_switch1 == 1) {
// CHECK-NEXT: acc += a[i];
// CHECK-NEXT: } else if (naiveopt_switch1 == MODE_A) {
// CHECK: continue;
// CHECK: } else if (naiveopt_switch1 == 4) {
// CHECK: break;
// CHECK: } else if (naiveopt_switch1 == 6) {
// CHECK-NEXT: acc = -acc;
// CHECK-NEXT: } else {
// CHECK-NEXT: acc -= 1.0f;
// CHECK-NEXT: }
// QUIET-NOT: warning
