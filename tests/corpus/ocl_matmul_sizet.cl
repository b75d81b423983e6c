// OpenCL SDK style: naive matrixMul with size_t work-item ids, wA/wB widths, C first.
// EXPECT-PASSES: thread-block-merge, thread-merge
// EXPECT: verified
#pragma naiveopt sizes(hA=39, wA=50, wB=44) threads(wB, hA) block(16, 16)
#pragma naiveopt array(A, hA, wA) array(B, wA, wB) array(C, hA, wB)
__kernel void matrixMul(__global float* C, __global float* A, __global float* B,
                        int hA, int wA, int wB)
{
    size_t tx = get_global_id(0);
    size_t ty = get_global_id(1);

    if (tx < wB && ty < hA) {
        float value = 0;
        for (int k = 0; k < wA; ++k)
        {
            float elementA = A[ty * wA + k];
            float elementB = B[k * wB + tx];
            value += elementA * elementB;
        }
        C[ty * wB + tx] = value;
    }
}
