// Naive regional-maximum test: output[y][x] = 1 if input[y][x] >= all of its (up to 8)
// in-bounds neighbours, else 0.
__kernel void imregionmax(__global const float *input, __global float *output, int H, int W)
{
    int x = get_global_id(0);
    int y = get_global_id(1);
    if (x < W && y < H) {
        float v = input[y * W + x];
        float result = 1.0f;
        for (int dy = -1; dy <= 1; dy++) {
            for (int dx = -1; dx <= 1; dx++) {
                int yy = y + dy;
                int xx = x + dx;
                if (yy >= 0 && yy < H && xx >= 0 && xx < W) {
                    if (input[yy * W + xx] > v)
                        result = 0.0f;
                }
            }
        }
        output[y * W + x] = result;
    }
}
