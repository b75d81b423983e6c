// PolyBench/GPU GESUMMV: y = alpha*A*x + beta*B*x, A and B are [N][N].
__kernel void gesummv_kernel(__global float *a, __global float *b, __global float *x,
                             __global float *y, __global float *tmp,
                             float alpha, float beta, int n)
{
    int i = get_global_id(0);

    if (i < n) {
        tmp[i] = 0.0f;
        y[i] = 0.0f;
        for (int j = 0; j < n; j++) {
            tmp[i] += a[i * n + j] * x[j];
            y[i] += b[i * n + j] * x[j];
        }
        y[i] = alpha * tmp[i] + beta * y[i];
    }
}
