// Naive partial-sum reduction: out[t] = sum_{j<CH} input[t*CH + j] for t < T.
// Each thread sums its own contiguous chunk.
__kernel void reduction(__global const float *input, __global float *output, int T, int CH)
{
    int t = get_global_id(0);
    if (t < T) {
        float sum = 0.0f;
        for (int j = 0; j < CH; j++)
            sum += input[t * CH + j];
        output[t] = sum;
    }
}
