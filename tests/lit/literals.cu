// Every C literal form is written back exactly as the user wrote it (issue 11: '1e-5f' came
// out as '1e'): signed exponents, hex floats, suffixes, octal/hex integers, character
// literals; in OpenCL only the long double literal changes (to double, with a remark).
// RUN: %naiveopt %s --no-opt | FileCheck %s
// RUN: %naiveopt %s --no-opt --target opencl | FileCheck %s --check-prefix=OCL
// RUN: %naiveopt %s --no-opt --target opencl --explain -o %t.cl 2>&1 | FileCheck %s --check-prefix=EXPLAIN

#pragma naiveopt sizes(n=100) threads(n) block(32) array(in, n) array(out, n)
__global__ void lits(const float *in, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float a = 1e-5f, b = 2.5E+3f, c = 0x1.8p-3f, d = .5e+1F, e = 1.f;
        double f = 1e-5, g = 0X1P+2, h = 1e-5L;
        unsigned long j = 0x10 + 010 + 10u + 10UL + 7llu + 0x1Fu;
        int k = 'a' + '\x41' + '\101' + '\n';
        out[i] = in[i] * a + b + c + d + e + f + g + h + j + k;
    }
}

// CHECK: float a = 1e-5f;
// CHECK-NEXT: float b = 2.5E+3f;
// CHECK-NEXT: float c = 0x1.8p-3f;
// CHECK-NEXT: float d = .5e+1F;
// CHECK-NEXT: float e = 1.f;
// CHECK-NEXT: double f = 1e-5;
// CHECK-NEXT: double g = 0X1P+2;
// CHECK-NEXT: double h = 1e-5L;
// CHECK-NEXT: unsigned long j = 0x10 + 010 + 10u + 10UL + 7llu + 0x1Fu;
// CHECK-NEXT: int k = 'a' + '\x41' + '\101' + '\n';

// OCL: float a = 1e-5f;
// OCL-NEXT: float b = 2.5E+3f;
// OCL-NEXT: float c = 0x1.8p-3f;
// OCL-NEXT: float d = .5e+1F;
// OCL-NEXT: float e = 1.f;
// OCL-NEXT: double f = 1e-5;
// OCL-NEXT: double g = 0X1P+2;
// OCL-NEXT: double h = 1e-5;
// OCL-NEXT: unsigned long j = 0x10 + 010 + 10u + 10UL + 7lu + 0x1Fu;
// OCL-NEXT: int k = 'a' + '\x41' + '\101' + '\n';

// EXPLAIN: [cuda-to-opencl] analysis: long double literal '1e-5L' written as double '1e-5' (OpenCL has no long double)
// EXPLAIN: lits: verification passed: pragma (n=100): out match naive kernel
