// Textbook C89 style: every local declared at the top of the kernel, pointers included, and
// set later by statements (`p = pts + i;` in the guard, `row = w + t * n;` in the loop body),
// an array of typedef'd structs read through `p->x`, a size_t count.
// An expert reads each point with one 8-byte load (float2).
// EXPECT-PASSES: vectorize
// EXPECT: verified
// XFAIL: vectorize: no access to vectorize
#include <stddef.h>

typedef struct { float x; float y; } point_t;

#pragma naiveopt sizes(n=1000, k=7)
__global__ void weighted_dist(const point_t *pts, const float *w, float *out, size_t n, int k,
                              float qx, float qy)
{
    size_t i;
    int t;
    const point_t *p;
    const float *row;
    float dx, dy, s;

    i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        p = pts + i;
        dx = p->x - qx;
        dy = p->y - qy;
        s = 0.0f;
        for (t = 0; t < k; t++) {
            row = w + t * n;
            s += row[i];
        }
        out[i] = s * sqrtf(dx * dx + dy * dy);
    }
}
