"""Naive kernels that race at the sizes verification runs them at (verify/extents.Extent.overlap,
verify/check._naive_race): where two threads of the naive launch certainly store to one
element (an unguarded kernel whose extra threads write past a row's end), the naive result
depends on the order the threads run in, so a mismatch there is no failure of the output:
verification says the naive kernel races, with a witness, and does not call it failed. Where
naiveopt cannot be sure (a condition it cannot read, a break), it claims no race."""
from __future__ import annotations

import pytest

import naiveopt
from naiveopt.verify.check import Mismatch, _naive_race

from test_infer import kernel

#: The CUDA samples' naive product: no bounds guard, so a thread space that is not a multiple
#: of the block launches threads past the row's end that write the next row's elements.
UNGUARDED = """\
#pragma naiveopt sizes(wA=37, wB=48, hA=80) threads(wB, hA) block(32, 32)
__global__ void mm(float *C, float *A, float *B, int wA, int wB)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    float sum = 0;
    for (int k = 0; k < wA; ++k)
        sum += A[row * wA + k] * B[k * wB + col];
    C[row * wB + col] = sum;
}
"""


def overlap(source: str, array: str, sizes: dict[str, int]) -> str:
    k, _, _ = kernel(source)
    return k.accesses[array].overlap(sizes)


def test_unguarded_threads_past_the_width_race_with_a_witness():
    found = overlap(UNGUARDED, "C", {"wA": 37, "wB": 48, "hA": 80})
    # the first pair: thread (48, 0), past the 48-wide row, writes row 1's first element,
    # which thread (0, 1) writes too
    assert found == "threads (x=48, y=0) and (x=0, y=1) both write C[48]", found
    # at a width that is a multiple of the block no two threads meet
    assert overlap(UNGUARDED, "C", {"wA": 37, "wB": 64, "hA": 96}) == ""
    # reads never race
    assert overlap(UNGUARDED, "A", {"wA": 37, "wB": 48, "hA": 80}) == ""


def test_a_guarded_kernel_does_not_race():
    guarded = UNGUARDED.replace("    float sum = 0;",
                                "    if (row >= hA || col >= wB) return;\n    float sum = 0;")
    guarded = guarded.replace("__global__ void mm(float *C, float *A, float *B, int wA, int wB)",
                              "__global__ void mm(float *C, float *A, float *B, int wA, int wB,"
                              " int hA)")
    assert overlap(guarded, "C", {"wA": 37, "wB": 48, "hA": 80}) == ""


REDUCE = """\
#pragma naiveopt sizes(n=1000) threads(n) block(256)
__global__ void partial(const float *x, float *out, int n)
{
    __shared__ float s[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    s[threadIdx.x] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (int k = 128; k > 0; k >>= 1) {
        if (threadIdx.x < k)
            s[threadIdx.x] += s[threadIdx.x + k];
        __syncthreads();
    }
    STORE
}
"""


def test_one_store_per_block_by_its_first_thread_does_not_race_and_every_thread_does():
    one = REDUCE.replace("STORE", "if (threadIdx.x == 0) out[blockIdx.x] = s[0];")
    assert overlap(one, "out", {"n": 1000}) == ""
    # every thread of the block storing the same sum is a race (a benign one: verification
    # only asks when the outputs differ)
    every = REDUCE.replace("STORE", "out[blockIdx.x] = s[0];")
    assert overlap(every, "out", {"n": 1000}) == \
        "threads (x=0) and (x=1) both write out[0]"


@pytest.mark.parametrize("store", [
    # the condition reads data: naiveopt cannot know which threads store
    "if (x[i] > 0.0f) out[0] = 1.0f;",
    # a break ends the loop early for some threads: the domain is a superset
    "for (int j = 0; j < n; j++) { if (x[j] > 1.0f) break; out[j] = 2.0f; }",
])
def test_no_race_is_claimed_where_the_domain_is_not_exact(store):
    source = REDUCE.replace("STORE", "if (i < n) { " + store + " }")
    assert overlap(source, "out", {"n": 1000}) == ""


def test_a_mismatch_on_a_racing_array_is_reported_as_the_naive_kernels_race():
    k, _, _ = kernel(UNGUARDED)
    sizes = {"wA": 37, "wB": 48, "hA": 80}
    why = _naive_race(k, sizes, Mismatch("C[1584] = np.float32(2.5), naive kernel gives "
                                         "np.float32(1.5)", "C", 1584))
    assert why.startswith("the naive kernel races: threads (x=48, y=32) and (x=0, y=33) both "
                          "write C[1584] at these sizes"), why
    assert "the first difference: C[1584]" in why
    assert "a thread space that is a multiple of its block" in why
    # a difference at an element only one thread stores to is the output's: a failure
    assert _naive_race(k, sizes, Mismatch("C[5] = 2.5, naive kernel gives 1.5", "C", 5)) == ""
    # a difference from the NumPy reference names no element of the naive run
    assert _naive_race(k, sizes, Mismatch("C differs from the reference")) == ""
    # a mismatch on an array without overlapping stores is a failure as before
    assert _naive_race(k, {"wA": 37, "wB": 64, "hA": 96},
                       Mismatch("C[5] = 1, naive kernel gives 2", "C", 5)) == ""


def test_a_racing_naive_kernel_is_never_a_failed_output():
    """End to end: whatever order PoCL runs the threads in, the racing kernel is either
    passed (the orders agreed) or not verified with the race said, never 'failed'."""
    result = naiveopt.optimize(UNGUARDED, filename="mm.cu")
    (k,) = result.kernels
    assert k.verification.status in ("passed", "skipped"), k.verification
    if k.verification.status == "skipped":
        assert "the naive kernel races" in k.verification.detail


#: The CUDA samples' naive product as they index it: a BLOCK_SIZE macro, the output's offset
#: through a local, no width the index implies for the thread space (it is free: globalDimX).
SAMPLES = """\
#define BLOCK_SIZE 16
PRAGMA
__global__ void mm(float *C, float *A, float *B, int wA, int wB)
{
    int bx = blockIdx.x, by = blockIdx.y;
    int tx = threadIdx.x, ty = threadIdx.y;
    float Csub = 0;
    for (int k = 0; k < wA; ++k)
        Csub += A[(by * BLOCK_SIZE + ty) * wA + k] * B[k * wB + bx * BLOCK_SIZE + tx];
    int c = wB * BLOCK_SIZE * by + BLOCK_SIZE * bx;
    C[c + wB * ty + tx] = Csub;
}
"""

SCALE = """
__global__ void scale(float *x, float a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = a * x[i];
}
void host(float *x, int n) { scale<<<(n + 255) / 256, 256>>>(x, 2.0f, n); }
"""


def _sets(detail: str, array: str = "C") -> list[dict[str, int]]:
    import re

    return [{k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", group)}
            for group in re.findall(rf"\(([^()]*)\): {array} match", detail)]


def test_inferred_free_extents_stop_at_the_row_width():
    """Without pragmas, the free x extent of the unguarded product was a multiple of every
    block in the file (768, past wB = 331: a race, and a false 'failed'); it is cut to the
    largest number of whole 16-wide blocks within the row, in both size sets."""
    result = naiveopt.optimize(SAMPLES.replace("PRAGMA", "") + SCALE, filename="mm.cu")
    mm = next(k for k in result.kernels if k.name == "mm")
    assert mm.verification.status == "passed", mm.verification.detail
    sets = _sets(mm.verification.detail)
    assert len(sets) == 2
    for sizes in sets:
        assert sizes["globalDimX"] <= sizes["wB"] and sizes["globalDimX"] % 16 == 0, sizes
        assert sizes["globalDimX"] > sizes["wB"] - 16, sizes       # the largest such


@pytest.mark.parametrize("pragma,expected", [
    # no threads clause, no array shapes: x at the row width (3 blocks: 64 would race),
    # y open to the most blocks
    ("#pragma naiveopt sizes(wA=37, wB=48, hA=80)", {"globalDimX": 48, "globalDimY": 128}),
    # C's shape given: y stops at its 80 rows
    ("#pragma naiveopt sizes(wA=37, wB=48, hA=80) array(C, hA, wB)",
     {"globalDimX": 48, "globalDimY": 80}),
])
def test_pragma_sizes_without_threads_give_the_free_extents_a_value(pragma, expected):
    """A ``sizes(...)`` pragma without ``threads(...)`` on an unguarded kernel was 'thread space
    unknown'; the free extents now get the largest whole number of naive blocks at which the
    naive kernel stays in the pragma's arrays and does not race."""
    result = naiveopt.optimize(SAMPLES.replace("PRAGMA", pragma), filename="mm.cu")
    (k,) = result.kernels
    assert k.verification.status == "passed", k.verification.detail
    (sizes,) = _sets(k.verification.detail)
    assert {d: sizes[d] for d in expected} == expected


#: An unguarded reversal: thread i reads A[N - 1 - i], so a thread space past N reads before
#: A's start (B, twice as long, does not stop it).
REVERSE = """\
PRAGMA
__global__ void rev(const float *A, float *B, int N)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    B[i] = 2.0f * A[N - 1 - i];
}
"""


def test_free_extents_keep_every_index_at_or_above_zero():
    """A free extent was cut only where an index went past an array's end or stores raced:
    the reversal's ``A[N - 1 - i]`` at globalDimX = 128 (8 blocks, B's 2N elements) read A
    from index -64, and the check ran the naive kernel on memory before A's start. It stops
    at N now."""
    pragma = "#pragma naiveopt sizes(N=64) block(16) array(A, N) array(B, 2 * N)"
    result = naiveopt.optimize(REVERSE.replace("PRAGMA", pragma), filename="rev.cu")
    (k,) = result.kernels
    assert k.verification.status == "passed", k.verification.detail
    (sizes,) = _sets(k.verification.detail, "B")
    assert sizes["globalDimX"] == 64


def test_the_least_index_of_an_access():
    k, _, _ = kernel(REVERSE.replace("PRAGMA", "#pragma naiveopt block(16) threads(T)"))
    assert k.accesses["A"].least({"N": 64, "T": 64}) == 0
    assert k.accesses["A"].least({"N": 64, "T": 80}) == -16
    assert k.accesses["B"].least({"N": 64, "T": 80}) == 0
    assert k.accesses["A"].outside({"N": 64, "T": 80}, 64) == "reads A[-16]"
    assert k.accesses["B"].outside({"N": 64, "T": 80}, 64) == "writes B[79]"
    assert k.accesses["A"].outside({"N": 64, "T": 64}, 64) == ""


@pytest.mark.parametrize("condition", [
    "flag[i] > 0",          # data
    "i + offset < N",       # a scalar no size set gives (the OpenCL SDK's transpose)
])
def test_no_outside_access_is_claimed_where_a_condition_is_left_out(condition):
    """``outside`` speaks only for exact domains: behind a condition on data, or on a scalar
    the sizes do not give, the access may run for no thread past the end."""
    source = f"""\
#pragma naiveopt block(16) threads(T)
__global__ void k(const float *A, float *B, const int *flag, int offset, int N)
{{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if ({condition})
        B[i] = A[N - 1 - i];
}}
"""
    k, _, _ = kernel(source)
    assert k.accesses["A"].least({"N": 64, "T": 80}) == -16     # conservative for sizes
    assert k.accesses["A"].outside({"N": 64, "T": 80}, 64) == ""


def test_sizes_at_which_the_naive_kernel_leaves_its_arrays_are_not_run():
    """Fuzz 20261 case 140: array shapes given and the thread space of the unguarded kernel
    wider than D's N rows. Running the naive kernel there wrote past D (PoCL crashed, or the
    output's run did and the case counted as a miscompile); the check now says which access
    leaves which array and runs nothing. (Inferred sizes now keep N at least the thread
    space, which ``A[N - 1 - i]`` needs: the sizes here are given.)"""
    source = """\
#pragma naiveopt sizes(N=16, M=8, K=4) threads(64, 4) block(16, 4)
#pragma naiveopt array(A, 2 * N) array(C, (M + 2), (N + 2)) array(D, N, (M + 1))
__global__ void k0(const float *__restrict__ A, const float *C, float *D, int N, int M, int K)
{
    size_t i;
    i = blockIdx.x * 16 + threadIdx.x;
    int j = (unsigned)blockIdx.y * blockDim.y + threadIdx.y;
    float acc = 0.0f;
    for (int k = K - 1; k >= 0; k--)
        acc += A[N - 1 - i] + A[i];
    for (int k = 0; k < K; k += 1) {
        float t1 = C[j * (N + 2) + i];
        acc += t1 * t1;
    }
    *(D + (i * (M + 1) + j)) = acc;
}
"""
    result = naiveopt.optimize(source, filename="k0.cu")
    (k,) = result.kernels
    assert k.verification.status == "skipped", k.verification.detail
    assert "the naive kernel writes D[" in k.verification.detail
    assert "outside D's" in k.verification.detail
