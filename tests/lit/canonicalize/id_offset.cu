// Thread space through an id offset by one (PolyBench's 1-based layouts: `j = ... + 1` with
// `j >= 1 && j <= m`), and through an id assigned after its C89 declaration (`int i, j;
// j = ...;`, which sink-declarations declares at its definition). Both were unverifiable
// ("thread space unknown") before.
// RUN: %naiveopt %s --explain -o %t.cu 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: FileCheck %s < %t.cu

#pragma naiveopt sizes(m=67, n=45) array(mean, m + 1) array(data, n + 1, m + 1)
__global__ void mean_1based(float *mean, const float *data, int m, int n)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x + 1;
    int i;

    if ((j >= 1) && (j <= m))
    {
        mean[j] = 0.0f;
        for (i = 1; i <= n; i++)
            mean[j] += data[i * (m + 1) + j];
        mean[j] /= 3.0f;
    }
}

__global__ void assigned_after(const float *data, float *mean, int m, int n)
{
    int i, j;
    j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < m + 1) {
        float s = 0.0f;
        for (i = 0; i < n + 1; i++)
            s += data[i * (m + 1) + j];
        mean[j] = s;
    }
}

// REMARK: mean_1based: remark [loop-iterators] applied: 1 loop(s) declare their iterator: for (int i = 1; ...)
// REMARK: assigned_after: remark [sink-declarations] applied: 1 local(s) declared where first assigned: int j = idx
// REMARK: mean_1based: remark [thread-space] analysis: thread space from bounds guard: (m, 1)
// REMARK: assigned_after: remark [thread-space] analysis: thread space from bounds guard: (m + 1, 1)
// REMARK: mean_1based: remark [register-promotion] applied:
// REMARK: mean_1based: verification passed
// REMARK: assigned_after: verification passed

// CHECK: //   launch: mean_1based<<<dim3((m + {{[0-9]+}}) / {{[0-9]+}}, 1), dim3({{[0-9]+}}, 1)>>>
// CHECK: //   launch: assigned_after<<<dim3((m + 1 + {{[0-9]+}}) / {{[0-9]+}}, 1), dim3({{[0-9]+}}, 1)>>>
