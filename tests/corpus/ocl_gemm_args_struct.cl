// OpenCL SGEMM with its sizes and scalars in one struct passed by value, as host code that
// keeps a kernel's arguments together writes it (`typedef struct {...} GemmArgs;`, a
// `const GemmArgs args` parameter read as args.M, args.alpha): C = alpha * A * B + beta * C,
// row-major, a work-item per element of C.
// EXPECT-PASSES: thread-block-merge, thread-merge
// EXPECT: verified
#pragma naiveopt sizes(args.M=37, args.N=45, args.K=29) block(16, 16)
#pragma naiveopt array(A, args.M, args.K) array(B, args.K, args.N) array(C, args.M, args.N)
typedef struct {
    int M;
    int N;
    int K;
    float alpha;
    float beta;
} GemmArgs;

__kernel void sgemm(const GemmArgs args, __global const float *A, __global const float *B,
                    __global float *C)
{
    int col = get_global_id(0);
    int row = get_global_id(1);
    if (row < args.M && col < args.N) {
        float acc = 0.0f;
        for (int k = 0; k < args.K; k++)
            acc += A[row * args.K + k] * B[k * args.N + col];
        C[row * args.N + col] = args.alpha * acc + args.beta * C[row * args.N + col];
    }
}
