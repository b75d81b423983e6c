// NVIDIA developer blog style ("An Efficient Matrix Transpose in CUDA C/C++"): tile sizes as
// named constants (`const int TILE_DIM = 32;`, read by the kernels as nvcc allows), each
// thread covering TILE_DIM / BLOCK_ROWS rows (`y + j`, j stepping by BLOCK_ROWS) under a
// TILE_DIM x BLOCK_ROWS launch, the width from `gridDim.x * TILE_DIM`, a padded shared tile
// and a transpose that reuses its x and y for the output. The constants are read as macros;
// the loop gives the naive block (32 x 8, 4 rows a thread), which the passes keep. (The
// blog's transposeNaive is in tests/test_geometry.py: it transposes square matrices only,
// and at the non-square sizes verification infers without the pragma its threads race.)
// EXPECT-PASSES: none
// EXPECT: verified
const int TILE_DIM = 32;
const int BLOCK_ROWS = 8;
#pragma naiveopt sizes(N=64) threads(N, N) array(odata, N, N) array(idata, N, N)

__global__ void copySharedMem(float *odata, const float *idata)
{
  __shared__ float tile[TILE_DIM * TILE_DIM];

  int x = blockIdx.x * TILE_DIM + threadIdx.x;
  int y = blockIdx.y * TILE_DIM + threadIdx.y;
  int width = gridDim.x * TILE_DIM;

  for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
     tile[(threadIdx.y+j)*TILE_DIM + threadIdx.x] = idata[(y+j)*width + x];

  __syncthreads();

  for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
     odata[(y+j)*width + x] = tile[(threadIdx.y+j)*TILE_DIM + threadIdx.x];
}

__global__ void transposeCoalesced(float *odata, const float *idata)
{
  __shared__ float tile[TILE_DIM][TILE_DIM+1];

  int x = blockIdx.x * TILE_DIM + threadIdx.x;
  int y = blockIdx.y * TILE_DIM + threadIdx.y;
  int width = gridDim.x * TILE_DIM;

  for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
     tile[threadIdx.y+j][threadIdx.x] = idata[(y+j)*width + x];

  __syncthreads();

  x = blockIdx.y * TILE_DIM + threadIdx.x;  // transpose block offset
  y = blockIdx.x * TILE_DIM + threadIdx.y;

  for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS)
     odata[(y+j)*width + x] = tile[threadIdx.x][threadIdx.y + j];
}
