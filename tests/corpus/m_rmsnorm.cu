// CUDA math: RMSNorm per row with rsqrtf, a weight vector and an epsilon parameter.
// EXPECT-PASSES: coalesce
// EXPECT: verified
#pragma naiveopt sizes(rows=150, dim=44) array(x, rows, dim) array(w, dim) array(out, rows, dim)
#pragma naiveopt scalar(eps, 1e-5)
__global__ void rmsnorm(float *out, const float *x, const float *w, float eps, int rows, int dim)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r < rows) {
        float ss = 0.0f;
        for (int j = 0; j < dim; j++)
            ss += x[r * dim + j] * x[r * dim + j];
        float inv = rsqrtf(ss / dim + eps);
        for (int j = 0; j < dim; j++)
            out[r * dim + j] = w[j] * (x[r * dim + j] * inv);
    }
}
