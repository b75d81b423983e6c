// loop-inits: a tutorial's grid-stride loop sets its index before the loop and leaves the
// init empty (`unsigned int tid = ...; for (; tid < n; tid += ...)`), and an inner loop runs
// from a counter set just before it. The starts move into the headers; grid-stride then makes
// the loop one element per thread and verification infers the extents (unverified before:
// "array shape unknown"). No pass changes its launch, so the output is the loop again (it
// runs on the user's launch).
// RUN: %naiveopt %s --explain -o %t.cu 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: %naiveopt %s --no-opt --no-verify | FileCheck %s
// RUN: %naiveopt %s --disable-pass=loop-inits -o %t.off.cu 2>&1 | FileCheck %s --check-prefix=OFF

__global__ void smooth(const float *x, float *y, unsigned int n, int taps)
{
    unsigned int tid = threadIdx.x + blockIdx.x * blockDim.x;
    for (; tid < n; tid += blockDim.x * gridDim.x) {
        float s = 0.0f;
        int k = 0;
        for (; k < taps; k++)
            s += x[tid + k];
        y[tid] = s;
    }
}

// REMARK: smooth: remark [loop-inits] applied: 2 loop(s) take the start set before them as their init: tid, k
// REMARK: smooth: remark [grid-stride] applied: grid-stride loop over tid < n
// REMARK: smooth: remark [restore-grid-stride] analysis: written back as the grid-stride loop over tid
// REMARK: smooth: verification passed: inferred

// CHECK-LABEL: __global__ void smooth(
// CHECK: for (unsigned int tid = idx; tid < n; tid += blockDimX * gridDimX) {
// CHECK: for (int k = 0; k < taps; k++) {

// OFF: warning: written unverified: array shape unknown
