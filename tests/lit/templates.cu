// Kernel templates: each instance the file uses is a kernel named for its arguments, a number
// parameter a macro of the instance; the host code launches the instances; an explicit
// instantiation is an instance too.
// RUN: %naiveopt %s --target cuda -o %t.cu 2>&1 | FileCheck %s --check-prefix=QUIET --allow-empty
// RUN: FileCheck %s < %t.cu
// RUN: %naiveopt %s --target opencl -o %t.cl 2>&1 | FileCheck %s --check-prefix=QUIET --allow-empty
// RUN: FileCheck %s --check-prefix=OPENCL < %t.cl
template <int ROWS, typename T>
__global__ void rows_sum(const T *in, T *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        T s = 0;
        for (int r = 0; r < ROWS; ++r)
            s += in[r * n + i];
        out[i] = s;
    }
}
template __global__ void rows_sum<2, double>(const double *, double *, int);

void run(const float *in, float *out, int n)
{
    rows_sum<4, float><<<(n + 127) / 128, 128>>>(in, out, n);
}

// QUIET-NOT: warning
// CHECK: // rows_sum_2_double: passes:
// CHECK: //   instance of rows_sum<2, double> (a kernel template)
// CHECK: // rows_sum_4_float: passes:
// CHECK: //   instance of rows_sum<4, float> (a kernel template)
// CHECK: #define rows_sum_4_float_ROWS 4
// CHECK: __global__ void rows_sum_2_double(const double *in, double *out, int n) {
// CHECK: for (int r = 0; r < rows_sum_2_double_ROWS; ++r) {
// CHECK: __global__ void rows_sum_4_float(const float *in, float *out, int n) {
// CHECK: rows_sum_4_float<<<(n + 127) / 128, 128>>>(in, out, n);
// CHECK-NOT: {{^}}template
// OPENCL: __kernel void rows_sum_2_double(__global const double *in, __global double *out, int n) {
// OPENCL: __kernel void rows_sum_4_float(__global const float *in, __global float *out, int n) {
