// OpenCL SDK style: reduce0, the interleaved-addressing tree reduction in __local memory that
// the reduction whitepaper starts from; one partial sum per work-group.
// EXPECT-PASSES: none
// EXPECT: verified
#pragma naiveopt sizes(n=1000, ngroups=4) threads(1024) block(256)
#pragma naiveopt array(g_idata, n) array(g_odata, ngroups)
__kernel void reduce0(__global float *g_idata, __global float *g_odata, unsigned int n,
                      __local float* sdata)
{
    // load shared mem
    unsigned int tid = get_local_id(0);
    unsigned int i = get_global_id(0);

    sdata[tid] = (i < n) ? g_idata[i] : 0;

    barrier(CLK_LOCAL_MEM_FENCE);

    // do reduction in shared mem
    for (unsigned int s = 1; s < get_local_size(0); s *= 2) {
        // modulo arithmetic is slow!
        if ((tid % (2 * s)) == 0) {
            sdata[tid] += sdata[tid + s];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }

    // write result for this block to global mem
    if (tid == 0) g_odata[get_group_id(0)] = sdata[0];
}
