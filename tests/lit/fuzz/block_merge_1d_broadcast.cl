// thread-block-merge staged a read the same for every thread of a 2-D kernel (A[k] of a 1-D
// array) by its 2-D form, which a 1-D access does not have (TypeError); it is now staged as
// one row indexed by its flat index, as coalesce stages MV's B[j].
// Found by python -m naiveopt.fuzz --seed 20261 (cases 32, 37, 41), reduced.
// RUN: %naiveopt %s --target cuda --arch sm_80 --disable-pass=thread-merge --require-verified --explain -o %t.cu 2>&1 | FileCheck %s
#pragma naiveopt sizes(N=65, M=47) block(32, 8) array(A, N) array(B, N, M) scalar(alpha, 1.5)
__kernel void k0(__global float *A, __global float *B, float alpha, int N, int M)
{
    int i = get_group_id(0) * get_local_size(0) + get_local_id(0);
    int j = get_global_id(1);
    if (i < N && j < M) {
        float acc = 0.0f;
        for (int k = 0; k < N; k++) {
            if (k < i)
                acc += A[N - 1 - k] * alpha * A[N - 1 - i] * A[k];
        }
        B[i * M + j] = acc;
    }
}

// CHECK: k0: remark [thread-block-merge] applied:
// CHECK: k0: verification passed
