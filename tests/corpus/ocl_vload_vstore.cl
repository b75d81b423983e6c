// AMD APP SDK / OpenCL guide style: four elements per work-item through vload4/vstore4,
// and a row dot product that walks a row pointer with vload4 (sizes only: shapes inferred).
// EXPECT-PASSES: vectorize
// EXPECT: verified
#pragma naiveopt sizes(n4=300, rows=77)
__kernel void vadd4(__global const float *a, __global const float *b, __global float *c, int n4)
{
    int i = get_global_id(0);
    if (i < n4) {
        float4 x = vload4(i, a);
        float4 y = vload4(0, b + 4 * i);
        vstore4(x + 2.0f * y, i, c);
    }
}

__kernel void rowdot4(__global const float *M, __global const float *x, __global float *y,
                      int n4, int rows)
{
    int r = get_global_id(0);
    if (r >= rows)
        return;
    __global const float *row = M + r * 4 * n4;
    float4 acc = (float4)(0.0f);
    for (int k = 0; k < n4; k++)
        acc += vload4(k, row) * vload4(0, &x[4 * k]);
    y[r] = acc.x + acc.y + acc.z + acc.w;
}
