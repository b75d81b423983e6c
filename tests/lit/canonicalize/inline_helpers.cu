// inline-helpers: image code reads through helpers, a fetch helper taking the image pointer
// and a clamp-to-edge helper of if-returns. Written out, the reads are the kernel's own, the
// clamp chain is a ternary the stencil reads as a clamp, and the window is staged. An int
// argument of an unsigned parameter is converted as the call converts it. With the pass off,
// the stencil finds no read to stage.
// (--cost-model unlimited: staged wherever legal; whether a 3-tap filter pays is
// the stencil tests' question, not this file's)
// RUN: %naiveopt %s --cost-model unlimited --explain -o %t.cu 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: %naiveopt %s --no-opt --no-verify | FileCheck %s
// RUN: %naiveopt %s --cost-model unlimited --disable-pass=inline-helpers --passes=stencil --explain --no-verify 2>&1 | FileCheck %s --check-prefix=OFF

__device__ int clamp_to_edge(int v, int n)
{
    if (v < 0)
        return 0;
    if (v >= n)
        return n - 1;
    return v;
}

__device__ float fetch(const float *img, int x, int y, int w, int h)
{
    return img[clamp_to_edge(y, h) * w + clamp_to_edge(x, w)];
}

__device__ float weight(const float *wts, unsigned int k)
{
    return wts[k];
}

#pragma naiveopt sizes(w=75, h=45) block(16, 16) array(src, h, w) array(dst, h, w) array(wts, 3)
__global__ void blur3(const float *src, const float *wts, float *dst, int w, int h)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h)
        dst[y * w + x] = weight(wts, 0) * fetch(src, x - 1, y, w, h) +
                         weight(wts, 1) * fetch(src, x, y, w, h) +
                         weight(wts, 2) * fetch(src, x + 1, y, w, h);
}

// REMARK: blur3: remark [inline-helpers] applied: helpers written out where they are called, so that the analyses see their reads and indices: weight (3 calls), fetch (3 calls)
// REMARK: blur3: remark [stencil] applied: staged in shared memory once per block: src(clamp(idy + [0, 0], 0, h - 1), clamp(idx + [-1, 1], 0, w - 1))
// REMARK: blur3: verification passed

// CHECK: __device__ int clamp_to_edge(int v, int n) {
// CHECK: __global__ void blur3(
// CHECK: wts[(unsigned int)0] * src[((y < 0) ? (0) : ((y >= h) ? (h - 1) : (y))) * w +
// CHECK-NEXT: ((x - 1 < 0) ? (0) : ((x - 1 >= w) ? (w - 1) : (x - 1)))] +

// OFF: blur3: remark [stencil] missed: no read-only global array
