// OpenCL SDK style: Black-Scholes call and put prices, one option per work-item, with the
// polynomial approximation of the normal CDF and native math built-ins.
// EXPECT-PASSES: none
// EXPECT: verified
#define A1 0.31938153f
#define A2 -0.356563782f
#define A3 1.781477937f
#define A4 -1.821255978f
#define A5 1.330274429f
#define RSQRT2PI 0.39894228040143267793994605993438f

float CND(float d)
{
    float K = 1.0f / (1.0f + 0.2316419f * fabs(d));
    float cnd = RSQRT2PI * exp(-0.5f * d * d) *
                (K * (A1 + K * (A2 + K * (A3 + K * (A4 + K * A5)))));
    if (d > 0)
        cnd = 1.0f - cnd;
    return cnd;
}

#pragma naiveopt sizes(optN=999) array(d_Call, optN) array(d_Put, optN) array(d_S, optN)
#pragma naiveopt array(d_X, optN) array(d_T, optN) scalar(R, 0.02) scalar(V, 0.30)
__kernel void BlackScholes(__global float *d_Call, __global float *d_Put,
                           __global const float *d_S, __global const float *d_X,
                           __global const float *d_T, float R, float V, unsigned int optN)
{
    unsigned int opt = get_global_id(0);
    if (opt < optN) {
        float S = d_S[opt] + 5.0f, X = d_X[opt] + 5.0f, T = d_T[opt] + 1.5f;
        float sqrtT = sqrt(T);
        float d1 = (log(S / X) + (R + 0.5f * V * V) * T) / (V * sqrtT);
        float d2 = d1 - V * sqrtT;
        float CNDD1 = CND(d1);
        float CNDD2 = CND(d2);
        float expRT = exp(-R * T);
        d_Call[opt] = S * CNDD1 - X * expRT * CNDD2;
        d_Put[opt] = X * expRT * (1.0f - CNDD2) - S * (1.0f - CNDD1);
    }
}
