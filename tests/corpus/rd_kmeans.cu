// Rodinia's k-means (CUDA version) as its kernels are written: C89 iterators declared before
// the loop, a `return;` ending the kernel after its guard, FLT_MAX from <float.h>, features
// stored point-major for the transpose and feature-major for the assignment. invert_mapping
// reads a row per thread (stride nfeatures between neighbouring threads): staged through
// shared memory once the trailing return no longer hides that the guard ends the kernel.
// kmeansPoint reads its features coalesced and the cluster centres alike for all threads.
// EXPECT-PASSES(invert_mapping): coalesce
// EXPECT-PASSES(kmeansPoint): none
// EXPECT: verified
#include <float.h>
#pragma naiveopt sizes(npoints=301, nfeatures=34, nclusters=5)

__global__ void invert_mapping(float *input, float *output, int npoints, int nfeatures)
{
    int point_id = threadIdx.x + blockDim.x * blockIdx.x;
    int i;

    if (point_id < npoints) {
        for (i = 0; i < nfeatures; i++)
            output[point_id + npoints * i] = input[point_id * nfeatures + i];
    }
    return;
}

__global__ void kmeansPoint(float *features, int nfeatures, int npoints, int nclusters,
                            int *membership, float *clusters)
{
    unsigned int point_id = blockIdx.x * blockDim.x + threadIdx.x;
    int index = -1;
    int i, l;

    if (point_id < npoints) {
        float min_dist = FLT_MAX;
        for (i = 0; i < nclusters; i++) {
            float dist = 0;
            for (l = 0; l < nfeatures; l++) {
                float d = features[l * npoints + point_id] - clusters[i * nfeatures + l];
                dist += d * d;
            }
            if (dist < min_dist) {
                min_dist = dist;
                index = i;
            }
        }
        membership[point_id] = index;
    }
}
