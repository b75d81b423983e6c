// The paper's macro style: 2-D convolution with a KS x KS window through accessor macros,
// idx/idy undeclared, the input padded by KS - 1, no guard (sizes multiples of the block).
// EXPECT-PASSES: stencil
// EXPECT: verified
// OPTIONS: --cost-model=unlimited
// (staged wherever legal: at this file's small sizes, or with its few taps held in L1,
// the cost model keeps it as written by default; the form is what is tested here)
#define KS 5
#define W 48
#define H 32
#define IW (W + KS - 1)
#define In(y,x) In[(y)*IW+(x)]
#define Out(y,x) Out[(y)*W+(x)]
#pragma naiveopt sizes(W=48, H=32) threads(W, H) block(16, 16)
#pragma naiveopt array(In, H + 4, W + 4) array(F, 5, 5) array(Out, H, W)
__global__ void conv(float *In, float *F, float *Out) {
    float sum = 0;
    for (int i = 0; i < KS; i++)
        for (int j = 0; j < KS; j++)
            sum += In(idy + i, idx + j) * F[i * KS + j];
    Out(idy, idx) = sum;
}
