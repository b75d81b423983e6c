// Tutorial particle system: an array of structs (`struct Particle { float x, y, z, vx, vy, vz; }`,
// six floats an element) stepped under gravity with a floor bounce, `p[i].vy -= g * dt`,
// and the whole system passed by pointer as tutorials write it. naiveopt reads the members as
// the floats they are (p[i * 6 + k]) and the output keeps `Particle *p`.
// EXPECT-PASSES: none
// EXPECT: verified
#pragma naiveopt sizes(n=1001)
struct Particle {
    float x, y, z;
    float vx, vy, vz;
};

__global__ void step(Particle *p, int n, float dt, float g)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        p[i].vy -= g * dt;
        p[i].x += p[i].vx * dt;
        p[i].y += p[i].vy * dt;
        p[i].z += p[i].vz * dt;
        if (p[i].y < 0.0f) {
            p[i].y = -p[i].y;
            p[i].vy = -0.5f * p[i].vy;
        }
    }
}
