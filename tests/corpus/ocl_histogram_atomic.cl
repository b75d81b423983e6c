// OpenCL SDK style: the naive 256-bin histogram, one atomic increment per input byte.
// EXPECT-PASSES: none
// EXPECT: verified
#pragma naiveopt sizes(n=3001, nbins=256) array(data, n) array(hist, nbins)
__kernel void histogram_naive(__global const uchar *data, __global uint *hist, int n)
{
    int i = get_global_id(0);
    if (i < n)
        atomic_inc(&hist[data[i]]);
}
