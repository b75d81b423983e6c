// Naive matrix-vector multiply: C[H] = A[H][W] * B[W], one row per thread.
__kernel void mv(__global float *A, __global float *B, __global float *C, int H, int W)
{
    int i = get_global_id(0);
    if (i < H) {
        float sum = 0.0f;
        for (int j = 0; j < W; j++) {
            sum += A[i * W + j] * B[j];
        }
        C[i] = sum;
    }
}
