// loop-iterators: PolyBench's C89 style declares the iterator before the loop (`int k;`,
// `for (k = 0; ...)`). The loop now declares it, the declaration before it goes (nothing else
// reads k), and thread-block-merge and thread-merge stage the product as they do
// `for (int k ...)`. With the pass off, thread-block-merge declines, saying why.
// RUN: %naiveopt %s --explain -o %t.cu 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: FileCheck %s < %t.cu
// RUN: %naiveopt %s --no-opt --no-verify | FileCheck %s --check-prefix=CANON
// RUN: %naiveopt %s --disable-pass=loop-iterators --passes=thread-block-merge --explain --no-verify 2>&1 | FileCheck %s --check-prefix=OFF

#pragma naiveopt sizes(ni=33, nj=39, nk=27) block(32, 8)
#pragma naiveopt array(A, ni, nk) array(B, nk, nj) array(C, ni, nj)
__global__ void mm(int ni, int nj, int nk, float *C, const float *A, const float *B)
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    int i = blockIdx.y * blockDim.y + threadIdx.y;
    int k;

    if ((i < ni) && (j < nj))
    {
        float acc = 0;
        for (k = 0; k < nk; k++)
        {
            acc += A[i * nk + k] * B[k * nj + j];
        }
        C[i * nj + j] = acc;
    }
}

// REMARK: mm: remark [loop-iterators] applied: 1 loop(s) declare their iterator: for (int k = 0; ...) (the declaration of k before it removed: nothing else reads it)
// REMARK: mm: remark [thread-block-merge] applied:
// REMARK: mm: remark [thread-merge] applied:
// REMARK: mm: verification passed

// CHECK: // mm: passes: {{.*}}thread-block-merge, thread-merge

// CANON: int i = idy;
// CANON-NOT: int k;
// CANON: for (int k = 0; k < nk; k++) {
// CANON-NEXT: acc += A[i * nk + k] * B[k * nj + j];

// OFF: mm: remark [loop-iterators] missed: disabled (--disable-pass)
// OFF: mm: remark [thread-block-merge] missed: A(idy, k): not staged for reuse: the loop does not declare its iterator k
