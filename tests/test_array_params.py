"""Array parameters of fixed inner extents (ir/array_params.py): ``float a[N][M]``,
``float (*a)[M]``, ``float a[][M]``, ``float a[]`` read as flat arrays, verified in both
dialects at sizes that are not tile multiples, written back for the CUDA host."""
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from conftest import compile_cuda, nvcc  # noqa: E402

import naiveopt  # noqa: E402
from naiveopt.errors import NaiveoptError  # noqa: E402

# a textbook matrix product over 2-D array parameters of a fixed width
MATMUL = """#define W 48
__global__ void matmul(const float A[][W], const float (*B)[W], float C[W][W], int n)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < n && col < W) {
        float sum = 0.0f;
        for (int k = 0; k < W; k++)
            sum += A[row][k] * B[k][col];
        C[row][col] = sum;
    }
}

void run(const float (*a)[W], const float (*b)[W], float (*c)[W], int n)
{
    matmul<<<dim3((W + 15) / 16, (n + 15) / 16), dim3(16, 16)>>>(a, b, c, n);
}
"""


@pytest.mark.parametrize("target", ["cuda", "opencl"])
def test_a_matrix_product_over_two_dimensional_parameters_verifies(target):
    result = naiveopt.optimize(MATMUL, filename="mm.cu", target=target)
    (k,) = result.kernels
    assert k.verification.status == "passed", k.verification.detail
    assert "inferred-odd" in k.verification.detail        # n at a size no tile divides
    if target == "cuda":
        assert "matmul(const float (*A)[48], const float (*B)[48], float (*C)[48], int n)" \
            in result.code
        assert "const float *A_flat = (const float *)A;" in result.code
    else:
        assert "__global const float *A" in result.code


@nvcc
def test_the_cuda_output_compiles_with_its_host_code(tmp_path):
    path = tmp_path / "mm.cu"
    path.write_text(naiveopt.optimize(MATMUL, filename="mm.cu").code)
    done = compile_cuda(str(path), str(tmp_path))
    assert done.returncode == 0, done.stderr[-2000:]


def test_three_dimensions_and_a_one_dimensional_array_parameter():
    source = """__global__ void k(const float v[][4][3], float out[], int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = v[i][1][2] + v[i][3][0];
}
"""
    result = naiveopt.optimize(source, filename="k.cu")
    assert result.kernels[0].verification.status == "passed", \
        result.kernels[0].verification.detail
    assert "k(const float (*v)[4][3], float *out, int n)" in result.code
    assert "v_flat[(i * 4 + 1) * 3 + 2]" in result.code


@pytest.mark.parametrize("body, message", [
    ("const float *row = a[i];\n    out[i] = row[0];", "only an offset of an array parameter"),
    ("out[i] = f(a[i]);", "array parameter 'a' used other than by indexing its elements"),
])
def test_a_row_used_other_than_by_indexing_is_a_located_error(body, message):
    source = ("__device__ float f(const float *r) { return r[0]; }\n"
              "__global__ void k(const float a[][8], float *out)\n{\n"
              "    int i = threadIdx.x;\n    " + body + "\n}\n")
    with pytest.raises(NaiveoptError) as info:
        naiveopt.optimize(source, filename="k.cu", verify=False, arch="none")
    assert info.value.line == 5
    assert message in info.value.message
