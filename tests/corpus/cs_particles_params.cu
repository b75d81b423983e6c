// CUDA samples style (particles/): the simulation's parameters in one struct in constant
// memory, `__constant__ SimParams params;`, filled by the host with cudaMemcpyToSymbol and
// read member by member (`params.gravity`, `params.numBodies` bounding the threads). The
// file was refused ("struct type 'SimParams' is not supported here").
// EXPECT-PASSES: none
// EXPECT: verified
typedef struct {
    float gravity;
    float globalDamping;
    float boundaryDamping;
    unsigned int numBodies;
} SimParams;

__constant__ SimParams params;

#pragma naiveopt sizes(params.numBodies=1000)
__global__ void integrateSystem(float4 *pos, float4 *vel, float deltaTime)
{
    unsigned int index = blockIdx.x * blockDim.x + threadIdx.x;
    if (index >= params.numBodies)
        return;
    float4 p = pos[index];
    float4 v = vel[index];
    v.y += params.gravity * deltaTime;
    v.x *= params.globalDamping;
    v.y *= params.globalDamping;
    v.z *= params.globalDamping;
    p.x += v.x * deltaTime;
    p.y += v.y * deltaTime;
    p.z += v.z * deltaTime;
    if (p.y < -1.0f) {
        p.y = -1.0f;
        v.y *= params.boundaryDamping;
    }
    pos[index] = p;
    vel[index] = v;
}

void setParameters(const SimParams *hostParams)
{
    cudaMemcpyToSymbol(params, hostParams, sizeof(SimParams));
}
