// CUDA by Example (Sanders & Kandrot) style: the heat-transfer kernels of chapter 7 and the
// ripple of chapter 5, as the book writes them: no bounds guard, no annotations, each
// thread's offset from its launch (`int offset = x + y * blockDim.x * gridDim.x;`), a DIM
// macro for the image side, neighbours clamped with if-statements, 8-bit RGBA pixels written
// a channel at a time. The launch covers the thread space exactly (no guard), so the width is
// read as the thread space's extent; no pass changes these kernels' launches, and the
// outputs read the launch's size again and keep their parameters. (DIM is overridable here,
// so that verification runs a 96-pixel image, not the book's 1024.)
// EXPECT-PASSES: none
// EXPECT: verified
// XFAIL(blend_kernel): unannotated: array shape unknown: the index of inSrc[top] depends on top
#ifndef DIM
#define DIM 1024
#endif
#define SPEED 0.25f
#pragma naiveopt sizes(DIM=96) threads(DIM, DIM) block(16, 16) scalar(ticks, 5)
#pragma naiveopt array(iptr, DIM, DIM) array(cptr, DIM, DIM) array(outSrc, DIM, DIM)
#pragma naiveopt array(inSrc, DIM, DIM) array(ptr, DIM, 4 * DIM)

__global__ void copy_const_kernel( float *iptr, const float *cptr ) {
    // map from threadIdx/BlockIdx to pixel position
    int x = threadIdx.x + blockIdx.x * blockDim.x;
    int y = threadIdx.y + blockIdx.y * blockDim.y;
    int offset = x + y * blockDim.x * gridDim.x;

    if (cptr[offset] != 0) iptr[offset] = cptr[offset];
}

__global__ void blend_kernel( float *outSrc, const float *inSrc ) {
    // map from threadIdx/BlockIdx to pixel position
    int x = threadIdx.x + blockIdx.x * blockDim.x;
    int y = threadIdx.y + blockIdx.y * blockDim.y;
    int offset = x + y * blockDim.x * gridDim.x;

    int left = offset - 1;
    int right = offset + 1;
    if (x == 0)   left++;
    if (x == DIM-1) right--;

    int top = offset - DIM;
    int bottom = offset + DIM;
    if (y == 0)   top += DIM;
    if (y == DIM-1) bottom -= DIM;

    outSrc[offset] = inSrc[offset] + SPEED * ( inSrc[top] +
                     inSrc[bottom] + inSrc[left] + inSrc[right] -
                     inSrc[offset]*4);
}

__global__ void ripple( unsigned char *ptr, int ticks ) {
    // map from threadIdx/BlockIdx to pixel position
    int x = threadIdx.x + blockIdx.x * blockDim.x;
    int y = threadIdx.y + blockIdx.y * blockDim.y;
    int offset = x + y * blockDim.x * gridDim.x;

    // now calculate the value at that position
    float fx = x - DIM/2;
    float fy = y - DIM/2;
    float d = sqrtf( fx * fx + fy * fy );
    unsigned char grey = (unsigned char)(128.0f + 127.0f *
                                         cos(d/10.0f - ticks/7.0f) /
                                         (d/10.0f + 1.0f));
    ptr[offset*4 + 0] = grey;
    ptr[offset*4 + 1] = grey;
    ptr[offset*4 + 2] = grey;
    ptr[offset*4 + 3] = 255;
}
