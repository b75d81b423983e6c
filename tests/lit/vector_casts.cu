// Vector accesses as people write them: a pointer cast to the array's vector type
// (`reinterpret_cast<const float4 *>(x)[i]`, a component through `->`) is read as the
// elements it makes (frontend/vector_casts.py), so the extents are inferred and the kernel
// verifies without pragmas; vectorize writes the whole vectors as one access again.
// RUN: %naiveopt %s --explain -o %t.cu 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: FileCheck %s < %t.cu
// RUN: rm -rf %t.d && %naiveopt %s --no-opt --dump-ir %t.d -o %t.no.cu
// RUN: FileCheck %s --check-prefix=CANON < %t.d/vector_casts_cu.00-input.ir
// RUN: FileCheck %s --check-prefix=NOOPT < %t.no.cu
__global__ void scale4(float *y, const float *x, float s, int n4)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) {
        float4 v = reinterpret_cast<const float4 *>(x)[i];
        float t = reinterpret_cast<const float2 *>(x + 4 * n4)->y;
        reinterpret_cast<float4 *>(y)[i] = make_float4(v.x * s, v.y * s, v.z * s, v.w + t);
    }
}

// REMARK: scale4: remark [vectorize] applied: 2 vector access(es) as the input wrote them (vloadN/vstoreN, vector pointer casts): load x[4*idx..+3]; store y[4*idx..+3]
// REMARK: scale4: verification passed: inferred
// CHECK: float4 v = naiveopt_load_float4(&x[4 * i]);
// CHECK: float t = x[4 * n4 + 1];
// CHECK: naiveopt_store_float4(&y[4 * i], vector_value);
// CANON: float4 v = make_float4(x[4 * i], x[4 * i + 1], x[4 * i + 2], x[4 * i + 3]);
// CANON: float t = x[4 * n4 + 1];
// CANON: y[4 * i] = vector_value.x;
// CANON: y[4 * i + 3] = vector_value.w;
// NOOPT: passes: none (functional only)
// NOOPT: float4 v = naiveopt_load_float4(&x[4 * i]);
// NOOPT: naiveopt_store_float4(&y[4 * i], vector_value);
