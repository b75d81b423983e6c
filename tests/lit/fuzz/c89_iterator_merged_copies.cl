// A C89 iterator declared before the guard, shared by a reversed loop and the loop coalescing
// stages: thread merge copied the declaration `int k;` into every merged copy, unrenamed (it
// is the staged loop's iterator's name), and the output did not build ("redefinition of
// 'k'"). loop-iterators now gives both loops their own k and drops the shared declaration.
// (A shared k that is also read after the loops still has the declaration, and still hits
// the copies' renaming.) Found by python -m naiveopt.fuzz --seed 4242 (case 0), reduced.
// RUN: %naiveopt %s --target opencl --arch gfx90a --require-verified --explain -o %t.cl 2>&1 | FileCheck %s
#pragma naiveopt sizes(N=3, M=1) array(P, (N + 2), N) array(S, N, M)
__kernel void k1(__global const double *P, __global double *S, int N, int M)
{
    int i = get_global_id(0);
    int j = get_global_id(1);
    int k;
    if (i < N && j < M) {
        double acc = 0.0;
        for (k = N - 1; k >= 0; k--)
            acc += 2.0;
        for (k = 0; k < N; k++)
            acc += P[i * N + k];
        S[i * M + j] = acc;
    }
}

// CHECK: k1: remark [loop-iterators] applied: 2 loop(s) declare their iterator: for (int k = N - 1; ...); for (int k = 0; ...)
// CHECK: k1: remark [thread-merge] applied:
// CHECK: k1: verification passed
