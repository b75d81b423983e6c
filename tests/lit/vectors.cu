// Vector values in CUDA: float2 elements, make_float2 and .x/.y fields. OpenCL writes the
// constructor as its vector literal.
// RUN: %naiveopt %s --target opencl --explain -o %t.cl 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// RUN: FileCheck %s --check-prefix=OPENCL < %t.cl
// RUN: %naiveopt %s --no-verify | FileCheck %s
#pragma naiveopt sizes(n=999) array(a, n) array(b, n) array(c, n)
__global__ void cmul(const float2 *a, const float2 *b, float2 *c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float2 x = a[i];
        float2 y = b[i];
        c[i] = make_float2(x.x * y.x - x.y * y.y, x.x * y.y + x.y * y.x);
    }
}

// EXPLAIN: cmul: verification passed
// OPENCL: float2 x = a[i];
// OPENCL: c[i] = (float2)(x.x * y.x - x.y * y.y, x.x * y.y + x.y * y.x);
// CHECK: c[i] = make_float2(x.x * y.x - x.y * y.y, x.x * y.y + x.y * y.x);
