// OpenCL SDK style: VectorAdd with Hungarian names and an early return for the padding
// work-items the host rounds the global size up to.
// EXPECT-PASSES: vectorize
// EXPECT: verified
#pragma naiveopt sizes(iNumElements=11444777 / 1000)
#pragma naiveopt array(a, iNumElements) array(b, iNumElements) array(c, iNumElements)
__kernel void VectorAdd(__global const float* a, __global const float* b, __global float* c, int iNumElements)
{
    // get index into global data array
    int iGID = get_global_id(0);

    // bound check (equivalent to the limit on a 'for' loop for standard/serial C code
    if (iGID >= iNumElements)
    {
        return;
    }

    // add the vector elements
    c[iGID] = a[iGID] + b[iGID];
}
