// OpenCL SDK style: transpose_naive with unsigned indices and an offset argument.
// EXPECT-PASSES: coalesce-writes
// EXPECT: verified
// XFAIL: coalesce-writes: odata(idx, idy): uncoalesced write, not staged: the guard is not 'idx < X && idy < Y'
#pragma naiveopt sizes(width=72, height=41) threads(width, height) block(16, 16)
#pragma naiveopt scalar(offset, 0)
#pragma naiveopt array(idata, height, width) array(odata, width, height)
__kernel void transpose_naive(__global float *odata, __global float* idata, int offset, int width, int height)
{
    unsigned int xIndex = get_global_id(0);
    unsigned int yIndex = get_global_id(1);

    if (xIndex + offset < width && yIndex < height)
    {
        unsigned int index_in  = xIndex + offset + width * yIndex;
        unsigned int index_out = yIndex + height * xIndex;
        odata[index_out] = idata[index_in];
    }
}
