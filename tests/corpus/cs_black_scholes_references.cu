// CUDA samples style: BlackScholes.cu's kernel, two options per thread through float2
// (optN / 2 threads), `__launch_bounds__(128)` on the line before `__global__`, the prices
// returned by a `__device__` helper through float references (`float &CallResult`), the
// normal CDF with `__expf`, `__fdividef` and `rsqrtf`, and `__restrict` pointers. The
// inputs are offset so that log(S / X) and sqrt(T) are defined on random data. OpenCL has
// no references: the helper takes private pointers there (`&callResult1`).
// EXPECT-PASSES: none
// EXPECT: verified
#pragma naiveopt sizes(optN=1998)
__device__ inline float cndGPU(float d)
{
    const float A1 = 0.31938153f;
    const float A2 = -0.356563782f;
    const float A3 = 1.781477937f;
    const float A4 = -1.821255978f;
    const float A5 = 1.330274429f;
    const float RSQRT2PI = 0.39894228040143267793994605993438f;
    float K = __fdividef(1.0f, (1.0f + 0.2316419f * fabsf(d)));
    float cnd = RSQRT2PI * __expf(- 0.5f * d * d) *
                (K * (A1 + K * (A2 + K * (A3 + K * (A4 + K * A5)))));
    if (d > 0)
        cnd = 1.0f - cnd;
    return cnd;
}

__device__ inline void BlackScholesBodyGPU(float &CallResult, float &PutResult,
                                           float S, float X, float T, float R, float V)
{
    float sqrtT, expRT;
    float d1, d2, CNDD1, CNDD2;
    sqrtT = __fdividef(1.0F, rsqrtf(T));
    d1 = __fdividef(__logf(S / X) + (R + 0.5f * V * V) * T, V * sqrtT);
    d2 = d1 - V * sqrtT;
    CNDD1 = cndGPU(d1);
    CNDD2 = cndGPU(d2);
    expRT = __expf(- R * T);
    CallResult = S * CNDD1 - X * expRT * CNDD2;
    PutResult  = X * expRT * (1.0f - CNDD2) - S * (1.0f - CNDD1);
}

__launch_bounds__(128)
__global__ void BlackScholesGPU(float2 *__restrict d_CallResult, float2 *__restrict d_PutResult,
                                float2 *__restrict d_StockPrice, float2 *__restrict d_OptionStrike,
                                float2 *__restrict d_OptionYears, float Riskfree,
                                float Volatility, int optN)
{
    const int opt = blockDim.x * blockIdx.x + threadIdx.x;
    if (opt < (optN / 2)) {
        float callResult1, callResult2;
        float putResult1, putResult2;
        BlackScholesBodyGPU(callResult1, putResult1, d_StockPrice[opt].x + 5.0f,
                            d_OptionStrike[opt].x + 5.0f, d_OptionYears[opt].x + 1.5f,
                            Riskfree, Volatility);
        BlackScholesBodyGPU(callResult2, putResult2, d_StockPrice[opt].y + 5.0f,
                            d_OptionStrike[opt].y + 5.0f, d_OptionYears[opt].y + 1.5f,
                            Riskfree, Volatility);
        d_CallResult[opt] = make_float2(callResult1, callResult2);
        d_PutResult[opt] = make_float2(putResult1, putResult2);
    }
}
