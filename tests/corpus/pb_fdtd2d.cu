// PolyBench/GPU style FDTD-2D field update (the hz kernel): reads ex and ey at the thread's
// cell and its +1 neighbours, read-modify-write of hz.
// EXPECT-PASSES: stencil
// EXPECT: verified
// OPTIONS: --cost-model=unlimited
// (staged only where legal: at 4096 the model keeps these few taps as written, which L1 holds)
typedef float DATA_TYPE;

#pragma naiveopt sizes(nx=61, ny=75) block(32, 8)
#pragma naiveopt array(ex, nx, ny + 1) array(ey, nx + 1, ny) array(hz, nx, ny)
__global__ void fdtd_step3_kernel(int nx, int ny, DATA_TYPE *ex, DATA_TYPE *ey, DATA_TYPE *hz)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;

    if ((i < nx) && (j < ny))
    {
        hz[i * ny + j] = hz[i * ny + j] - 0.7f * (ex[i * (ny + 1) + (j + 1)] - ex[i * (ny + 1) + j]
                                                  + ey[(i + 1) * ny + j] - ey[i * ny + j]);
    }
}
