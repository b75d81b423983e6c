// float4 values: per-pixel RGBA scale and bias, component by component.
// EXPECT-PASSES: none
// EXPECT: verified
#pragma naiveopt sizes(n=1025) array(in, n) array(out, n) scalar(s, 0.5) scalar(b, 0.25)
__global__ void scaleBias4(const float4 *in, float4 *out, float s, float b, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float4 v = in[i];
        v.x = v.x * s + b;
        v.y = v.y * s + b;
        v.z = v.z * s + b;
        v.w = v.w * s + b;
        out[i] = v;
    }
}
