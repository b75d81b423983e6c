// Naive partial-sum reduction: out[t] = sum_{j<CH} input[t*CH + j] for t < T.
// Each thread sums its own contiguous chunk.
__global__ void reduction(const float *input, float *output, int T, int CH)
{
    int t = threadIdx.x + blockIdx.x * blockDim.x;
    if (t < T) {
        float sum = 0.0f;
        for (int j = 0; j < CH; j++)
            sum += input[t * CH + j];
        output[t] = sum;
    }
}
