// Textbook CUDA: SAXPY as the introductory blog posts write it (n first, a scalar).
// EXPECT-PASSES: none
// EXPECT: verified
#pragma naiveopt sizes(n=4099) array(x, n) array(y, n) scalar(a, 2.0)
__global__
void saxpy(int n, float a, float *x, float *y)
{
  int i = blockIdx.x*blockDim.x + threadIdx.x;
  if (i < n) y[i] = a*x[i] + y[i];
}
