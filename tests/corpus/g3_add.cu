// 3-D grid: elementwise update of a volume, x/y/z each from block and thread ids and a
// 3-D block.
// EXPECT-PASSES: none
// EXPECT: verified
#pragma naiveopt sizes(nx=37, ny=19, nz=7) threads(nx, ny, nz) block(16, 8, 2)
#pragma naiveopt array(a, nz, ny, nx) array(b, nz, ny, nx) scalar(alpha, 0.5)
__global__ void axpy3d(float alpha, const float *a, float *b, int nx, int ny, int nz)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int z = blockIdx.z * blockDim.z + threadIdx.z;
    if (x < nx && y < ny && z < nz) {
        int i = (z * ny + y) * nx + x;
        b[i] = alpha * a[i] + b[i];
    }
}
