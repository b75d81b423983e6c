// An unguarded kernel reading B[N - 1 - i]: inference took N for a tap radius (5, then 3),
// so the naive kernel read before B at the inferred sizes and the garbage differed between
// the runs (a false miscompile). N now bounds the thread space along i's axis.
// Found by python -m naiveopt.fuzz --seed 1156 (case 9).
// RUN: %naiveopt %s --target opencl --arch sm_80 --disable-pass=thread-block-merge --disable-pass=prefetch --disable-pass=coalesce-writes --require-verified --explain -o %t.cl 2>&1 | FileCheck %s
typedef float elem_t;
typedef elem_t *ELEM_T_PTR;
__global__ void k0(ELEM_T_PTR A, ELEM_T_PTR B, const elem_t *C, const elem_t *D, const elem_t *E, ELEM_T_PTR F, int N, int K, int L)
{
    int i = threadIdx.x + blockIdx.x * blockDim.x;
    int k;
    elem_t acc = 0.0f;
    for (int k = 0; k <= i - 1; k++) {
        A[i] += B[max(min(i + 2, N - 1), 0)];
    }
    for (k = K - 1; k >= 0; k--) {
        for (int l = 0; l <= L - 1; l++) {
            acc += B[N - 1 - i];
            acc -= C[N - 1 - i];
        }
        A[i] += B[i] * B[i + 1] * B[N - 1 - i];
        for (int l = 0; l < N; l++) {
            if (l < i)
                acc += C[i] + D[__mul24(l, (N + 2)) + l];
            acc += 2e0L + 1.5f - A[i];
        }
    }
    F[i] = acc;
}


// CHECK: k0: verification passed
