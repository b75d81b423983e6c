// PolyBench/GPU MVT: x1 += A y_1, x2 += A^T y_2, A is [N][N].
__kernel void mvt_kernel1(__global float *a, __global float *x1, __global float *y_1, int n)
{
    int i = get_global_id(0);

    if (i < n) {
        for (int j = 0; j < n; j++) {
            x1[i] += a[i * n + j] * y_1[j];
        }
    }
}

__kernel void mvt_kernel2(__global float *a, __global float *x2, __global float *y_2, int n)
{
    int i = get_global_id(0);

    if (i < n) {
        for (int j = 0; j < n; j++) {
            x2[i] += a[j * n + i] * y_2[j];
        }
    }
}
