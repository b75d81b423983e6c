// Textbook CUDA (Kirk & Hwu's first matrix kernel): square Width x Width matrices,
// Pvalue accumulator, capitalised Row/Col, Md/Nd/Pd device names.
// EXPECT-PASSES: thread-block-merge, thread-merge
// EXPECT: verified
#pragma naiveopt sizes(Width=43) block(16, 16)
#pragma naiveopt array(Md, Width, Width) array(Nd, Width, Width) array(Pd, Width, Width)
__global__ void MatrixMulKernel(float* Md, float* Nd, float* Pd, int Width)
{
    int Row = blockIdx.y * blockDim.y + threadIdx.y;
    int Col = blockIdx.x * blockDim.x + threadIdx.x;

    if ((Row < Width) && (Col < Width)) {
        float Pvalue = 0;
        for (int k = 0; k < Width; ++k)
            Pvalue += Md[Row * Width + k] * Nd[k * Width + Col];
        Pd[Row * Width + Col] = Pvalue;
    }
}
