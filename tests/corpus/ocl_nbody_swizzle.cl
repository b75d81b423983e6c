// OpenCL SDK / tutorial style n-body step: float4 positions with the mass in w, swizzles
// (`q.xyz - p.xyz`, `vel[i].xyz += ...`), float3 arithmetic, rsqrt and dot. The swizzles were
// refused ("vector component '.xyz' has no CUDA equivalent"), and the store to `vel[i].xyz`
// was taken for a read, so verification compared nothing.
// EXPECT-PASSES: none
// EXPECT: verified
#pragma naiveopt sizes(n=300)
__kernel void nbody_step(__global const float4 *pos, __global float4 *vel, const int n,
                         const float dt, const float eps2)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    float4 p = pos[i];
    float3 acc = (float3)(0.0f, 0.0f, 0.0f);
    for (int j = 0; j < n; j++) {
        float4 q = pos[j];
        float3 d = q.xyz - p.xyz;
        float invr = rsqrt(dot(d, d) + eps2);
        float invr3 = invr * invr * invr;
        acc += q.w * invr3 * d;
    }
    vel[i].xyz += acc * dt;
}
