// OpenCL style: SAXPY on float4 elements (the vector type carries the width).
// EXPECT-PASSES: none
// EXPECT: verified
#pragma naiveopt sizes(n=1001) array(x, n) array(y, n) scalar(a, 0.75)
__kernel void saxpy4(__global const float4 *x, __global float4 *y, float a, int n)
{
    int i = get_global_id(0);
    if (i < n)
        y[i] = a * x[i] + y[i];
}
