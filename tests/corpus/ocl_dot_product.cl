// OpenCL SDK style: DotProduct of 4-vectors stored as flat floats, iInOffset = iGID << 2.
// EXPECT-PASSES: vectorize
// EXPECT: verified
// XFAIL: vectorize: across threads: no read moves by one element between neighbouring threads or is the same for them
#pragma naiveopt sizes(iNumElements=1203)
#pragma naiveopt array(a, iNumElements * 4) array(b, iNumElements * 4) array(c, iNumElements)
__kernel void DotProduct(__global float* a, __global float* b, __global float* c, int iNumElements)
{
    // find position in global arrays
    int iGID = get_global_id(0);

    // bound check (equivalent to the limit on a 'for' loop for standard/serial C code
    if (iGID >= iNumElements)
    {
        return;
    }

    // process
    int iInOffset = iGID << 2;
    c[iGID] = a[iInOffset] * b[iInOffset]
               + a[iInOffset + 1] * b[iInOffset + 1]
               + a[iInOffset + 2] * b[iInOffset + 2]
               + a[iInOffset + 3] * b[iInOffset + 3];
}
