// GPU Gems 3 (ch. 31) style n-body, before its tiling: positions and masses as float4, the
// body-body interaction in a `__device__` helper returning a float3, accumulators
// initialized by braces (`float3 acc = {0.0f, 0.0f, 0.0f};`, `float4 acc4 = {...}`), a
// softening `#define` with an `f` suffix. Every thread reads body j at once (a broadcast that
// L1 serves on sm_90), so no pass is expected; the chapter's shared-memory tiles pay off
// where the interaction is compute-bound (issue 18's kernels).
// EXPECT-PASSES: none
// EXPECT: verified
#pragma naiveopt sizes(N=333)
#define EPS2 0.01f

__device__ float3 bodyBodyInteraction(float4 bi, float4 bj, float3 ai)
{
    float3 r;
    r.x = bj.x - bi.x;
    r.y = bj.y - bi.y;
    r.z = bj.z - bi.z;
    float distSqr = r.x * r.x + r.y * r.y + r.z * r.z + EPS2;
    float distSixth = distSqr * distSqr * distSqr;
    float invDistCube = 1.0f / sqrtf(distSixth);
    float s = bj.w * invDistCube;
    ai.x += r.x * s;
    ai.y += r.y * s;
    ai.z += r.z * s;
    return ai;
}

__global__ void calculate_forces(const float4 *globalX, float4 *globalA, int N)
{
    int gtid = blockIdx.x * blockDim.x + threadIdx.x;
    if (gtid >= N)
        return;
    float4 myPosition = globalX[gtid];
    float3 acc = {0.0f, 0.0f, 0.0f};
    for (int j = 0; j < N; j++)
        acc = bodyBodyInteraction(myPosition, globalX[j], acc);
    float4 acc4 = {acc.x, acc.y, acc.z, 0.0f};
    globalA[gtid] = acc4;
}
