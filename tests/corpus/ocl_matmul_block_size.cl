// OpenCL SDK style: naive matrixMul indexed by get_group_id * BLOCK_SIZE + get_local_id
// instead of get_global_id (the host enqueues BLOCK_SIZE x BLOCK_SIZE work-groups), int
// widths, no bounds guard (the output's sizes are multiples of BLOCK_SIZE, wA odd).
// EXPECT-PASSES: thread-block-merge, thread-merge
// EXPECT: verified
#define BLOCK_SIZE 8
#pragma naiveopt sizes(hA=40, wA=29, wB=56) threads(wB, hA)
#pragma naiveopt array(A, hA, wA) array(B, wA, wB) array(C, hA, wB)
__kernel void matrixMulGroups(__global float* C, __global const float* A,
                              __global const float* B, int wA, int wB)
{
    int row = get_group_id(1) * BLOCK_SIZE + get_local_id(1);
    int col = BLOCK_SIZE * get_group_id(0) + get_local_id(0);
    float sum = 0.0f;
    for (int k = 0; k < wA; ++k)
        sum += A[row * wA + k] * B[k * wB + col];
    C[row * wB + col] = sum;
}
