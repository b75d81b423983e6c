// Textbook CUDA (Kirk & Hwu's 1-D convolution): mask in __constant__ memory, a start point
// that may fall outside the input, ghost elements skipped by a test inside the loop.
// EXPECT-PASSES: stencil
// EXPECT: verified
// OPTIONS: --cost-model=unlimited
// (staged wherever legal: at this file's small sizes, or with its few taps held in L1,
// the cost model keeps it as written by default; the form is what is tested here)
#define MAX_MASK_WIDTH 7
__constant__ float M[MAX_MASK_WIDTH];

#pragma naiveopt sizes(Width=999, Mask_Width=7) array(N, Width) array(P, Width)
__global__ void convolution_1D_basic_kernel(float *N, float *P, int Mask_Width, int Width)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < Width) {
        float Pvalue = 0;
        int N_start_point = i - (Mask_Width / 2);
        for (int j = 0; j < Mask_Width; j++) {
            if (N_start_point + j >= 0 && N_start_point + j < Width) {
                Pvalue += N[N_start_point + j] * M[j];
            }
        }
        P[i] = Pvalue;
    }
}
