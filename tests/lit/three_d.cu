// A batched kernel indexed by blockIdx.z: the launch has a z dimension of one block per batch
// (the extent from the guard), and a header a host can paste (integer ceil-division).
// RUN: %naiveopt %s --no-opt | FileCheck %s
// RUN: %naiveopt %s --no-opt --target opencl | FileCheck %s --check-prefix=CL

#pragma naiveopt sizes(m=1000, nb=3) array(a, nb*m) array(b, nb*m)
__global__ void scale(const float *a, float *b, int m, int nb)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int z = blockIdx.z;
    if (i < m - 1 && z < nb)
        b[z * m + i] = 2.0f * a[z * m + i];
}

// CHECK: //   launch: scale<<<dim3((m - 1 + 255) / 256, 1, nb), dim3(256, 1, 1)>>>
// CHECK-NEXT: //   thread space: (m - 1, 1, nb)
// CHECK: int z = blockIdx.z;
// CL: //   local size:  (256, 1, 1)
// CL-NEXT: //   global size: ((m - 1 + 255) / 256 * 256, 1, nb)
// CL-NEXT: //   thread space: (m - 1, 1, nb)
// CL: int z = get_group_id(2);
