// Naive transposed matrix-vector multiply: C[W] = A^T * B, A is [H][W].
// One thread per column; the loop over rows reads A[i*W+col] (coalesced across threads).
__kernel void tmv(__global const float *A, __global const float *B, __global float *C, int H, int W)
{
    int col = get_global_id(0);
    if (col < W) {
        C[col] = 0.0f;
        for (int i = 0; i < H; i++)
            C[col] += A[i * W + col] * B[i];
    }
}
