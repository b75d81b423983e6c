// OpenCL SDK style: MatVecMulUncoalesced0, a work-item per row in a loop strided by the
// global size, uint sizes.
// EXPECT-PASSES: coalesce|vectorize
// EXPECT: verified
#pragma naiveopt sizes(width=77, height=300) threads(height)
#pragma naiveopt array(M, height, width) array(V, width) array(W, height)
__kernel void MatVecMulUncoalesced0(const __global float* M,
                                    const __global float* V,
                                    uint width, uint height,
                                    __global float* W)
{
    // Each work-item handles as many matrix rows as necessary
    for (uint y = get_global_id(0);
         y < height;
         y += get_global_size(0))
    {
        // Row pointer
        const __global float* row = M + y * width;

        // Compute dot product
        float dotProduct = 0;
        for (uint x = 0; x < width; ++x)
            dotProduct += row[x] * V[x];

        // Write result to global memory
        W[y] = dotProduct;
    }
}
