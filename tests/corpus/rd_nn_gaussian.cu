// Rodinia style: nearest neighbour's distances over an array of structs read through a local
// pointer and `->` (`LatLong *latLong = d_locations + globalId; latLong->lat`), its global id
// built from a 2-D grid of 1-D blocks (`blockDim.x * (gridDim.x * blockIdx.y + blockIdx.x) +
// threadIdx.x`, for more elements than one grid row holds), and gaussian elimination's Fan1 /
// Fan2 writing through `*(a_cuda + Size * (... + t + 1) + t)`, guarded by early returns on
// `Size - 1 - t` (the row t eliminated is an offset of the thread space, not a size).
// Fan2's threads along x walk rows of a_cuda (stride Size): an expert would swap the thread
// axes so that x walks its columns; naiveopt has no such transformation yet.
// EXPECT: verified
// EXPECT-PASSES(euclid): none
// EXPECT-PASSES(Fan1): none
// EXPECT-PASSES(Fan2): coalesce-writes
// XFAIL(Fan2): coalesce-writes: the array is accessed elsewhere in the kernel
typedef struct latLong { float lat; float lng; } LatLong;

#pragma naiveopt sizes(numRecords=1000, Size=67, t=3)
__global__ void euclid(LatLong *d_locations, float *d_distances, int numRecords, float lat,
                       float lng)
{
    int globalId = blockDim.x * (gridDim.x * blockIdx.y + blockIdx.x) + threadIdx.x;
    LatLong *latLong = d_locations + globalId;
    if (globalId < numRecords) {
        float *dist = d_distances + globalId;
        *dist = (float)sqrt((lat - latLong->lat) * (lat - latLong->lat) +
                            (lng - latLong->lng) * (lng - latLong->lng));
    }
}

__global__ void Fan1(float *m_cuda, float *a_cuda, int Size, int t)
{
    if (threadIdx.x + blockIdx.x * blockDim.x >= Size - 1 - t) return;
    *(m_cuda + Size * (blockDim.x * blockIdx.x + threadIdx.x + t + 1) + t) =
        *(a_cuda + Size * (blockDim.x * blockIdx.x + threadIdx.x + t + 1) + t) /
        *(a_cuda + Size * t + t);
}

__global__ void Fan2(float *m_cuda, float *a_cuda, float *b_cuda, int Size, int j1, int t)
{
    if (threadIdx.x + blockIdx.x * blockDim.x >= Size - 1 - t) return;
    if (threadIdx.y + blockIdx.y * blockDim.y >= Size - t) return;
    int xidx = blockIdx.x * blockDim.x + threadIdx.x;
    int yidx = blockIdx.y * blockDim.y + threadIdx.y;
    a_cuda[Size * (xidx + 1 + t) + (yidx + t)] -=
        m_cuda[Size * (xidx + 1 + t) + t] * a_cuda[Size * t + (yidx + t)];
    if (yidx == 0) {
        b_cuda[xidx + 1 + t] -= m_cuda[Size * (xidx + 1 + t) + (yidx + t)] * b_cuda[t];
    }
}
