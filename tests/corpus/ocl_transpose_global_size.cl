// An OpenCL tutorial's first transpose: a typedef'd element, C89 `unsigned int x, y;` set
// after their declaration, no bounds guard, no annotations, and the input's row width read
// from the launch (`get_global_size(0)`). The launch covers the thread space exactly, so the
// width is read as the thread space's x extent (a free size the output takes as a parameter)
// and the transposed write is staged through a tile whose grid overhangs the sizes.
// EXPECT-PASSES: coalesce-writes
// EXPECT: verified
typedef float elem_t;
#pragma naiveopt sizes(W=80, rows=48) threads(W, rows) block(16, 16)
#pragma naiveopt array(in, rows, W) array(out, W, rows)

__kernel void transpose(__global elem_t *out, __global const elem_t *in,
                        const unsigned int rows)
{
    unsigned int x, y;
    x = get_global_id(0);
    y = get_global_id(1);
    out[x * rows + y] = in[y * get_global_size(0) + x];
}
