// The CUDA samples' vector arithmetic: helper_math.h (Common/helper_math.h, on the include
// path, not beside the file) gives float3/float4 operators and functions, as the particles,
// smoke and volume-rendering samples use them: `vel + gravity * dt`, `vel *= damping`,
// `pos += vel * dt`, make_float3 of a float4, dot/length/normalize/clamp. Each thread
// updates its own particle; nothing for a pass to stage.
// EXPECT-PASSES: none
// EXPECT: verified
#include "helper_math.h"
#pragma naiveopt sizes(numParticles=300)

__global__ void integrateSystem(float4 *pos, float4 *vel, float3 gravity, float deltaTime,
                                float damping, float radius, int numParticles)
{
    int index = blockIdx.x * blockDim.x + threadIdx.x;
    if (index >= numParticles) return;
    float3 p = make_float3(pos[index]);
    float3 v = make_float3(vel[index]);
    v += gravity * deltaTime;
    v *= damping;
    p += v * deltaTime;
    if (p.x > 1.0f - radius) { p.x = 1.0f - radius; v.x *= -0.5f; }
    if (p.x < -1.0f + radius) { p.x = -1.0f + radius; v.x *= -0.5f; }
    if (p.y < -1.0f + radius) { p.y = -1.0f + radius; v.y *= -0.5f; }
    pos[index] = make_float4(p, 1.0f);
    vel[index] = make_float4(v, vel[index].w);
}

__global__ void shadeParticles(const float4 *pos, const float3 *normal, float4 *color,
                               float3 lightDir, int numParticles)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < numParticles) {
        float3 n = normalize(normal[i]);
        float diffuse = clamp(dot(n, lightDir), 0.0f, 1.0f);
        float3 base = lerp(make_float3(0.1f, 0.2f, 0.8f), make_float3(1.0f), diffuse);
        float fade = 1.0f / (1.0f + length(make_float3(pos[i])));
        color[i] = make_float4(base * fade, 1.0f);
    }
}
