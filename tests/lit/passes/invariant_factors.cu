// invariant-factors after register promotion: gemm's reduction multiplies every term by
// alpha; the factor is taken out of the loop over k (one multiply per output instead of one
// per iteration), so the loop is pure FMA. With --fp-strict the sum keeps its order and the
// pass declines, saying why.
// RUN: %naiveopt %s --passes=register-promotion,invariant-factors --explain -o %t.cu 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: FileCheck %s < %t.cu
// RUN: %naiveopt %s --passes=register-promotion,invariant-factors --fp-strict --explain 2>&1 | FileCheck %s --check-prefix=STRICT

#pragma naiveopt sizes(NI=45, NJ=37, NK=29) array(a, NI, NK) array(b, NK, NJ) array(c, NI, NJ)
__global__ void gemm_alpha(const float *a, const float *b, float *c, float alpha, float beta,
                           int NI, int NJ, int NK)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i < NI && j < NJ) {
        c[i * NJ + j] *= beta;
        for (int k = 0; k < NK; k++)
            c[i * NJ + j] += alpha * a[i * NK + k] * b[k * NJ + j];
    }
}

// REMARK: gemm_alpha: remark [invariant-factors] applied: r_c: factor alpha taken out of loop k
// REMARK: verification passed
// CHECK: // gemm_alpha: passes: register-promotion, invariant-factors
// CHECK: float r_c_alpha = 0.0f;
// CHECK: for (int k = 0; k < NK; k++) {
// CHECK-NEXT: r_c_alpha += a[i * NK + k] * b[k * NJ + j];
// CHECK-NEXT: }
// CHECK: r_c += alpha * r_c_alpha;
// CHECK-NEXT: c[i * NJ + j] = r_c;
// STRICT: remark [invariant-factors] missed: --fp-strict: floating-point sums keep their order
// STRICT: r_c += alpha * a[i * NK + k] * b[k * NJ + j];
