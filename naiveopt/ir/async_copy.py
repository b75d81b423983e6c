"""Asynchronous copies from global into shared memory (``cp.async``, sm_80 and later).

A staged loop that loads its next tile through registers (register prefetch) holds the tile's
share of every thread in registers while it computes; ``cp.async`` moves the elements from
global memory straight into shared memory without a register, and the thread only waits for
them (``cp.async.wait_group``) before the barrier that makes them visible. Copies are grouped
(``cp.async.commit_group``): a group per tile, so that a wait for all groups but the N newest
waits for one tile while N more are in flight.

The IR has three statements for this:

- ``AsyncCopy``: one element ``dst = ok ? src : 0`` (dst in shared memory); where ``ok`` is
  false nothing is read and the element is zero-filled, as the synchronous tile loads do;
- ``AsyncFence("commit")``: the copies issued since the last commit form a group;
- ``AsyncFence("wait", pending=N)``: wait until at most N groups are still in flight.

CUDA output calls small helpers (:func:`cuda_helpers`) that issue the PTX instructions on
sm_80 and later and copy synchronously on older architectures (there the fences do nothing),
so the file compiles for any ``-arch``. OpenCL has no such instruction: the translation writes
the copy as a plain assignment and drops the fences (the synchronous form, which verification
runs on PoCL; the barrier after the wait orders it as before).
"""
from __future__ import annotations

from pycparser import c_ast

from .elements import element
from .rewrite import walk

#: Bytes per element that cp.async can copy (its sizes are 4, 8 and 16).
COPY_BYTES = (4, 8)


class AsyncCopy(c_ast.Node):
    """A statement: ``dst = ok ? src : 0`` issued asynchronously (module docstring)."""

    __slots__ = ("dst", "src", "ok", "elem", "dialect", "coord", "__weakref__")
    attr_names = ("elem", "dialect")

    def __init__(self, dst: c_ast.ArrayRef, src: c_ast.ArrayRef, ok: c_ast.Node | None,
                 elem: str, dialect: str = "cuda", coord: object = None) -> None:
        self.dst, self.src, self.ok, self.elem, self.dialect, self.coord = (
            dst, src, ok, elem, dialect, coord)

    def children(self) -> tuple:
        out = [("dst", self.dst), ("src", self.src)]
        if self.ok is not None:
            out.append(("ok", self.ok))
        return tuple(out)

    def __iter__(self):
        yield self.dst
        yield self.src
        if self.ok is not None:
            yield self.ok


class AsyncFence(c_ast.Node):
    """A statement: commit the copies issued so far as a group (``op == 'commit'``), or wait
    until at most ``pending`` groups are in flight (``op == 'wait'``)."""

    __slots__ = ("op", "pending", "dialect", "coord", "__weakref__")
    attr_names = ("op", "pending", "dialect")

    def __init__(self, op: str, pending: int = 0, dialect: str = "cuda",
                 coord: object = None) -> None:
        self.op, self.pending, self.dialect, self.coord = op, pending, dialect, coord

    def children(self) -> tuple:
        return ()

    def __iter__(self):
        return iter(())


def can_copy(elem: str) -> bool:
    """Whether elements of type ``elem`` can be copied by cp.async."""
    e = element(elem)
    return e is not None and e.bytes in COPY_BYTES


def print_copy(node: AsyncCopy, dst: str, src: str, ok: str | None) -> str:
    """The statement's text (a statement: with its ';')."""
    if node.dialect == "opencl":
        value = src if ok is None else f"{ok} ? {src} : 0"
        return f"{dst} = {value};"
    return f"naiveopt_cp_async(&{dst}, &{src}, {'1' if ok is None else ok});"


def print_fence(node: AsyncFence) -> str:
    """The fence's text; OpenCL has none (the copies there are synchronous)."""
    if node.dialect == "opencl":
        return ""
    if node.op == "commit":
        return "naiveopt_cp_async_commit();"
    return f"naiveopt_cp_async_wait<{node.pending}>();"


def uses_async(trees: list[c_ast.Node]) -> bool:
    """Whether any of ``trees`` issues an asynchronous copy."""
    return any(isinstance(n, (AsyncCopy, AsyncFence)) for tree in trees for n, _ in walk(tree))


def drop_fences(tree: c_ast.Node) -> None:
    """Remove every AsyncFence from the statement lists of ``tree`` (OpenCL: no fences)."""
    for n, _ in walk(tree):
        if isinstance(n, c_ast.Compound) and n.block_items:
            n.block_items = [s for s in n.block_items if not isinstance(s, AsyncFence)]


#: CUDA definitions of the helpers (module docstring). ``.ca`` (cached in L1) takes the 4- and
#: 8-byte sizes; a false ``ok`` gives a source size of 0, which zero-fills and reads nothing.
#: Their template parameters have names no kernel's macro has: ``template <int N>`` did not
#: compile where the sizes are macros (syrk built with -DN=..., seen on an H200).
_HELPERS = r"""// cp.async (sm_80 and later): global -> shared without a register; zero-filled where
// ok is false. Older architectures copy synchronously and the fences do nothing.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define NAIVEOPT_CP_ASYNC 1
#endif
template <typename NaiveoptElem>
__device__ __forceinline__ void naiveopt_cp_async(NaiveoptElem *dst, const NaiveoptElem *src, bool ok) {
#ifdef NAIVEOPT_CP_ASYNC
    unsigned s = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(s), "l"(src),
                 "n"(sizeof(NaiveoptElem)), "r"(ok ? (int)sizeof(NaiveoptElem) : 0)
                 : "memory");
#else
    *dst = ok ? *src : (NaiveoptElem)0;
#endif
}
__device__ __forceinline__ void naiveopt_cp_async_commit() {
#ifdef NAIVEOPT_CP_ASYNC
    asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}
template <int NaiveoptPending>
__device__ __forceinline__ void naiveopt_cp_async_wait() {
#ifdef NAIVEOPT_CP_ASYNC
    asm volatile("cp.async.wait_group %0;\n" ::"n"(NaiveoptPending) : "memory");
#endif
}"""


def cuda_helpers(trees: list[c_ast.Node]) -> list[str]:
    """The CUDA helper definitions the trees need (none without asynchronous copies)."""
    return [_HELPERS] if uses_async(trees) else []
