// Naive matrix-matrix multiply: C[H][W] = A[H][K] * B[K][W], one output element per thread.
__kernel void mm(__global const float * restrict A, __global const float * restrict B,
                 __global float * restrict C, int H, int W, int K)
{
    int col = get_global_id(0);
    int row = get_global_id(1);
    if (row < H && col < W) {
        float sum = 0.0f;
        for (int k = 0; k < K; k++)
            sum += A[row * K + k] * B[k * W + col];
        C[row * W + col] = sum;
    }
}
