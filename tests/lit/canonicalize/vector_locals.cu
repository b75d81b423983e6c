// vector-locals: Udacity CS344's style names a thread's 2-D position as one int2
// (`make_int2(...)`, then `pos.y * numCols + pos.x` and a guard on its components). Each
// component becomes a local of its own, so the ids, the guard and the index read as they do
// for scalar locals: verified without pragmas. A vector read whole (`shifted = pos`) stays.
// RUN: %naiveopt %s --explain -o %t.cu 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: FileCheck %s < %t.cu
// RUN: %naiveopt %s --no-opt --no-verify | FileCheck %s --check-prefix=CANON
__global__ void rgba_to_greyscale(const uchar4 *const rgbaImage, unsigned char *const greyImage,
                                  int numRows, int numCols)
{
    const int2 thread_2D_pos = make_int2(blockIdx.x * blockDim.x + threadIdx.x,
                                         blockIdx.y * blockDim.y + threadIdx.y);
    const int thread_1D_pos = thread_2D_pos.y * numCols + thread_2D_pos.x;
    if (thread_2D_pos.x >= numCols || thread_2D_pos.y >= numRows)
        return;
    uchar4 rgba = rgbaImage[thread_1D_pos];
    greyImage[thread_1D_pos] = .299f * rgba.x + .587f * rgba.y + .114f * rgba.z;
}

__global__ void whole(int *out, int n)
{
    int2 pos = make_int2(blockIdx.x * blockDim.x + threadIdx.x, 0);
    int2 shifted = pos;
    if (shifted.x < n)
        out[shifted.x] = pos.y;
}

// REMARK: rgba_to_greyscale: remark [vector-locals] applied: 1 integer vector local(s) read by component made one local per component: thread_2D_pos -> thread_2D_pos_x, thread_2D_pos_y
// REMARK-NOT: whole: remark [vector-locals] applied
// REMARK: rgba_to_greyscale: verification passed
// CHECK: if (thread_2D_pos_x >= numCols || thread_2D_pos_y >= numRows) {
// CHECK: int2 pos = make_int2(idx, 0);
// CANON: const int thread_2D_pos_x = idx;
// CANON: const int thread_2D_pos_y = idy;
// CANON: const int thread_1D_pos = thread_2D_pos_y * numCols + thread_2D_pos_x;
// CANON: int2 pos = make_int2(idx, 0);
