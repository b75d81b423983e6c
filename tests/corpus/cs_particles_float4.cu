// CUDA samples style particle integration: float4 positions and velocities updated a
// component at a time (`pos[i].x += vel[i].x * dt`, a bounce that flips `vel[i].y`), the
// way particles/ and nbody/ write it. Those stores were taken for reads: verification
// compared only `speed`, never the positions.
// EXPECT-PASSES: none
// EXPECT: verified
#pragma naiveopt sizes(n=1000)
__global__ void integrate(float4 *pos, float4 *vel, float *speed, int n, float dt, float floorY)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        vel[i].y -= 9.81f * dt;
        pos[i].x += vel[i].x * dt;
        pos[i].y += vel[i].y * dt;
        pos[i].z += vel[i].z * dt;
        if (pos[i].y < floorY) {
            pos[i].y = floorY;
            vel[i].y = -0.5f * vel[i].y;
        }
        speed[i] = sqrtf(vel[i].x * vel[i].x + vel[i].y * vel[i].y + vel[i].z * vel[i].z);
    }
}
