// 3-D grid: one Jacobi step of the 7-point heat stencil, a plane per blockIdx.z, interior only.
// EXPECT-PASSES: stencil
// EXPECT: verified
#pragma naiveopt sizes(nx=35, ny=21, nz=6) block(16, 8)
#pragma naiveopt array(u, nz, ny, nx) array(unew, nz, ny, nx)
__global__ void heat7(const float *u, float *unew, int nx, int ny, int nz)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int j = blockIdx.y * blockDim.y + threadIdx.y;
    int k = blockIdx.z;
    if (i > 0 && i < nx - 1 && j > 0 && j < ny - 1 && k > 0 && k < nz - 1) {
        int c = (k * ny + j) * nx + i;
        unew[c] = u[c] + 0.1f * (u[c - 1] + u[c + 1] + u[c - nx] + u[c + nx]
                                 + u[c - nx * ny] + u[c + nx * ny] - 6.0f * u[c]);
    }
}
