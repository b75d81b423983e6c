// Atomic updates in OpenCL: integers by OpenCL's own functions, a float's add and CUDA's
// wrapping increment by compare-and-swap helpers written before the kernels; the passes keep
// the kernel as written and verification compares the updated arrays.
// RUN: %naiveopt %s --target opencl --explain -o %t.cl 2>&1 | FileCheck %s --check-prefix=EXPLAIN
// RUN: FileCheck %s < %t.cl
// RUN: %naiveopt %s --target cuda -o %t.cu 2>&1 | FileCheck %s --check-prefix=QUIET --allow-empty
// RUN: FileCheck %s --check-prefix=CUDA < %t.cu
#pragma naiveopt sizes(n=1001) array(v, n) array(bins, 16) array(total, 1) array(ticks, 1)
__global__ void tally(const float *v, int *bins, float *total, unsigned int *ticks, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        atomicAdd(bins + ((int)(v[i] * 8.0f) & 15), 1);
        atomicAdd(total, v[i]);
        atomicInc(ticks, 63u);
    }
}

// EXPLAIN: tally: remark [coalesce] missed: the kernel updates bins atomically (atomicAdd): the optimization passes keep kernels with atomics as written
// EXPLAIN: tally: verification passed
// CHECK: float naiveopt_atomic_add_float_global(volatile __global float *p, float v) {
// CHECK: old = atomic_cmpxchg((volatile __global uint *)p, seen, as_uint(as_float(seen) + v));
// CHECK: uint naiveopt_atomic_inc_uint_global(volatile __global uint *p, uint v) {
// CHECK: old = atomic_cmpxchg(p, seen, seen >= v ? 0 : seen + 1);
// CHECK: __kernel void tally(
// CHECK: atomic_add(&bins[((int)(v[i] * 8.0f)) & 15], 1);
// CHECK-NEXT: naiveopt_atomic_add_float_global(&total[0], v[i]);
// CHECK-NEXT: naiveopt_atomic_inc_uint_global(&ticks[0], 63u);
// QUIET-NOT: warning
// CUDA: atomicAdd(&bins[((int)(v[i] * 8.0f)) & 15], 1);
// CUDA-NEXT: atomicAdd(&total[0], v[i]);
// CUDA-NEXT: atomicInc(&ticks[0], 63u);
