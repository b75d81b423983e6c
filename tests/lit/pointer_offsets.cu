// Local pointers that offset an array parameter (llm.c's row pointers, '*p' writes, '&a[e]',
// offsets of offsets, 'e + a', 'a - e') are read as indexed accesses of the parameter: the
// declarations disappear, every use indexes the parameter, the user's other names stay, and
// the row walk is then seen (and coalesced) like any other.
// RUN: %naiveopt %s --explain -o %t.cu 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// RUN: FileCheck %s < %t.cu
// RUN: %naiveopt %s --target opencl --explain -o %t.cl 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// RUN: %naiveopt %s --no-opt | FileCheck %s --check-prefix=NOOPT
#pragma naiveopt sizes(N=77, C=45) array(out, N, C) array(inp, N, C) array(sums, N) array(w, C)
__global__ void rows(float *out, float *sums, const float *inp, const float *w, int N, int C)
{
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < N) {
        const float *x = inp + idx * C;
        const float *last = &x[C - 1];
        const float *shifted = 1 + x;
        float *out_row = out + idx * C;
        float *sum = sums + idx;
        float s = 0.0f;
        for (int i = 0; i < C; i++) {
            s += x[i] * w[i];
        }
        for (int i = 0; i < C - 1; i++) {
            out_row[i] = shifted[i] - *(x + i);
        }
        out_row[C - 1] = *last;
        *sum = s;
    }
}

// EXPLAIN: rows: remark [coalesce] applied
// EXPLAIN: rows: verification passed

// NOOPT-NOT: *x
// NOOPT: s += inp[idx * C + i] * w[i];
// NOOPT: out[idx * C + i] = inp[idx * C + 1 + i] - inp[idx * C + i];
// NOOPT: out[idx * C + (C - 1)] = inp[idx * C + (C - 1)];
// NOOPT: sums[idx] = s;

// CHECK-NOT: const float *x
// CHECK: sums[
