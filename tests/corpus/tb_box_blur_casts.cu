// A tutorial box blur as people write it: a typedef'd element type,
// size_t sizes compared through casts to long (`x >= (long)w`), C89 locals declared at the
// top, an early return, a run-time radius and taps fenced by a bounds test. The guard's casts
// still give the thread space (w, h); the filter is staged and register-blocked (stencil)
// and verified, with the sizes below and without them (inferred).
// EXPECT-PASSES: stencil
// EXPECT: verified
#pragma naiveopt sizes(w=83, h=61, r=3) block(16, 16) array(in, h, w) array(out, h, w)
typedef float real;

__global__ void box_blur(const real *in, real *out, size_t w, size_t h, int r)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int dy, dx;
    real s;
    if (x >= (long)w || y >= (long)h)
        return;
    s = 0;
    for (dy = -r; dy <= r; dy++) {
        for (dx = -r; dx <= r; dx++) {
            long yy = y + dy;
            long xx = x + dx;
            if (yy >= 0 && yy < (long)h && xx >= 0 && xx < (long)w)
                s += in[yy * w + xx];
        }
    }
    out[y * w + x] = s / ((2 * r + 1) * (2 * r + 1));
}
