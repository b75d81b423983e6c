"""Canonicalization: functional passes between parsing and the analyses, each bringing one
spelling of a common construct to the form the analyses and optimization passes expect (like
LLVM's loop-simplify and instcombine), one idea per pass:

=====================  ======================================================================
inline-helpers         a call of a helper that reads memory or computes an integer is the
                       helper's value written out (``pixel(raw, y, x, H, W)`` is a read of raw)
thread-ids             a global id written through locals (``int tx = threadIdx.x;``
                       ``bx * blockDim.x + tx``) is the global id
const-propagation      a ``const`` integer local with a uniform value is written into the loop
                       headers, guards and indices that use it
loop-inits             ``int i = idx; for (; i < n; i += s)`` is ``int i; for (i = idx; ...)``
grid-stride            a grid-stride loop whose iterations are independent becomes one
                       element per thread (its bound is then the thread space)
while-to-for           ``k = 0; while (k < n) { ...; k++; }`` is a for loop
loop-iterators         a loop iterator declared before its loop (C89) is declared in it; its
                       final value is kept where it is read after the loop
sink-declarations      ``int i; ... i = e;`` declares i where it is first defined
clamp-ifs              ``if (x < 0) x = 0; if (x >= w) x = w - 1;`` is the clamp written with
                       ternaries, which the analyses read as min/max
split-locals           an integer local that straight-line code assigns again is a local per
                       definition
merge-guards           consecutive early returns, and an if nested alone in another, are one
                       bounds guard
=====================  ======================================================================

The pass order is written once, in passes/pipeline.py. Every pass keeps the user's names (it
moves and merges what the user wrote; it never renames), leaves a remark saying what it
rewrote, or why it left a form alone where it could not prove the rewrite safe, and its
output is verified with the kernel: the verifier runs the naive kernel as written.
"""
