// The paper's macro style: transpose whose accessor macros use the predefined globalDimX /
// globalDimY for the widths, so the kernel names no size at all. Unguarded, so its launch
// covers the thread space (W, H) exactly: the widths are read as W and H (parameters the
// launcher passes), and the transposed write is coalesced through shared memory.
// EXPECT-PASSES: coalesce-writes
// EXPECT: verified
#define A(y,x) A[(y)*globalDimX+(x)]
#define B(y,x) B[(y)*globalDimY+(x)]
#pragma naiveopt sizes(W=80, H=48) threads(W, H) block(16, 16)
#pragma naiveopt array(A, H, W) array(B, W, H)
__global__ void transpose(float *A, float *B) {
    B(idx, idy) = A(idy, idx);
}
