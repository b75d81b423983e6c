// MV with --memory texture: A and B become texture objects (OpenCL: 1-D buffer images) and
// the loop fetches through them; C, which the kernel writes, stays a pointer.
// RUN: %naiveopt %s --memory texture | FileCheck %s
// RUN: %naiveopt %s --memory texture --target opencl | FileCheck %s --check-prefix=CL

#pragma naiveopt sizes(H=67, W=45) array(A, H, W) array(B, W) array(C, H)
__global__ void mv(float *A, float *B, float *C, int H, int W)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < H) {
        float sum = 0.0f;
        for (int j = 0; j < W; j++) {
            sum += A[i * W + j] * B[j];
        }
        C[i] = sum;
    }
}

// CHECK: // mv: passes: {{.*}}texture
// CHECK: //   texture A: texture object over A (linear, float)
// CHECK: //   texture B: texture object over B (linear, float)
// CHECK: __global__ void mv(cudaTextureObject_t A,
// CHECK: cudaTextureObject_t B,
// CHECK: float *C, int H, int W) {
// CHECK: for (int [[J:j[_0-9]*]] = {{[a-z_0-9]+}}; [[J]] < W; [[J]]++) {
// CHECK-NEXT: sum{{[_0-9]*}} += tex1Dfetch<float>(A, i{{[_0-9]*}} * W + [[J]]) * tex1Dfetch<float>(B, [[J]]);
// CHECK-NEXT: }
// CHECK-NOT: A[
// CHECK-NOT: B[

// CL: //   texture A: image1d_buffer over A (CL_R, CL_FLOAT)
// CL: __kernel void mv(read_only image1d_buffer_t A,
// CL: read_only image1d_buffer_t B,
// CL: for (int [[J:j[_0-9]*]] = {{[a-z_0-9]+}}; [[J]] < W; [[J]]++) {
// CL-NEXT: sum{{[_0-9]*}} += read_imagef(A, i{{[_0-9]*}} * W + [[J]]).x * read_imagef(B, [[J]]).x;
// CL-NOT: A[
