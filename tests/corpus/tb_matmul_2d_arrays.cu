// Textbook C style: the matrices as two-dimensional array parameters of a fixed width
// (`float A[N][N]`, indexed `A[row][k]`), as code ported from C writes them. Such parameters
// were refused ("parameter type 'float[256][256]' is not supported").
// EXPECT-PASSES: thread-block-merge
// EXPECT: verified
#define N 256

#pragma naiveopt sizes(rows=200)
__global__ void matmul(const float A[N][N], const float B[N][N], float C[N][N], int rows)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < rows && col < N) {
        float sum = 0.0f;
        for (int k = 0; k < N; k++)
            sum += A[row][k] * B[k][col];
        C[row][col] = sum;
    }
}
