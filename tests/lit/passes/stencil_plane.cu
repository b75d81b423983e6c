// a 7-point heat stencil over a 3-D grid, a plane per blockIdx.z: blockIdx.z is the same for
// every thread of a block, so the block's window of its own plane (rows blockIdx.z * ny +
// idy + [-1, 1] of the nz*ny x nx array) is staged; the neighbouring planes, each element read
// by one thread, stay global reads.
// RUN: %naiveopt %s --merge 2:2 --explain -o %t.cu 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: FileCheck %s < %t.cu
// RUN: %naiveopt %s --merge 2:2 --target opencl --explain -o %t.cl 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: FileCheck %s --check-prefix=CL < %t.cl

#pragma naiveopt sizes(nx=45, ny=23, nz=5) block(16, 8)
#pragma naiveopt array(u, nz, ny, nx) array(unew, nz, ny, nx)
__global__ void heat(const float *u, float *unew, int nx, int ny, int nz)
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

// REMARK: heat: remark [stencil] applied: staged in shared memory once per block: u(idy + [blockIdx.z*ny - 1, blockIdx.z*ny + 1], idx + [-1, 1]) -> s_u; each thread computes 2x2 outputs
// REMARK: heat: verification passed

// CHECK: // heat: passes: stencil
// CHECK: __shared__ float s_u[
// CHECK: int k_0_0 = blockIdx.z;
// CHECK: if (1 < nx - 1 && 1 < ny - 1 && k_0_0 > 0 && k_0_0 < nz - 1) {
// CHECK: ({{[0-9]+}} * bidy + blockIdx.z * ny + r - 1 >= blockIdx.z * ny &&
// CHECK: __syncthreads();
// CHECK: unew[c_0_0] = s_u[tidy + 1][tidx + 1] +
// CHECK: u[c_0_0 - nx * ny] + u[c_0_0 + nx * ny]

// CL: // heat: passes: stencil
// CL: int k_0_0 = get_group_id(2);
// CL: ({{[0-9]+}} * bidy + get_group_id(2) * ny + r - 1 >= get_group_id(2) * ny &&
