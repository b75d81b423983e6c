"""The forms a thread id takes in kernel source, recognised in one place.

CUDA's built-ins (``threadIdx.x``, ``blockIdx.y``, ``blockDim.x``...) become the IR's predefined
ids (tidx, bidy, blockDimX...). The global id along an axis is the block id times the block size
plus the thread id, in any operand order; the CUDA samples write the block size as a compile-time
constant (``blockIdx.x * BLOCK_SIZE + threadIdx.x``); textbook kernels name the built-ins first
(``int tx = threadIdx.x;``). The predefined pass (predefined.py) and the thread-ids
canonicalization (canonicalize/thread_ids.py) read all of these; the tables and the matchers
they share live here, so that both read a form the same way.
"""
from __future__ import annotations

from typing import Callable, Iterator, NamedTuple

from pycparser import c_ast

from ...ir import GProcedure, PredefId
from ...ir.rewrite import assigned_names, walk

#: CUDA's built-in (struct, field) -> the IR's predefined id.
BUILTIN_IDS = {("threadIdx", "x"): "tidx", ("threadIdx", "y"): "tidy",
               ("blockIdx", "x"): "bidx", ("blockIdx", "y"): "bidy",
               ("blockDim", "x"): "blockDimX", ("blockDim", "y"): "blockDimY",
               ("gridDim", "x"): "gridDimX", ("gridDim", "y"): "gridDimY"}

#: axis -> (block id, block size, thread id, the global id they make).
GLOBAL_IDS = {"x": ("bidx", "blockDimX", "tidx", "idx"), "y": ("bidy", "blockDimY", "tidy", "idy")}

#: (block id, block size, thread id) -> the global id they make.
PARTS = {(bid, dim, tid): gid for bid, dim, tid, gid in GLOBAL_IDS.values()}

Resolver = Callable[[c_ast.Node], "str | None"]


def cuda_spelling(name: str) -> str:
    """A predefined id's name as CUDA writes it (any other name as it is)."""
    return {v: f"{k[0]}.{k[1]}" for k, v in BUILTIN_IDS.items()}.get(name, name)


def products_plus_term(node: c_ast.Node) -> Iterator[tuple[c_ast.BinaryOp, c_ast.Node]]:
    """(product, term) for ``node`` written product + term in either operand order, the
    product seen through casts; nothing if ``node`` is no such sum."""
    if not (isinstance(node, c_ast.BinaryOp) and node.op == "+"):
        return
    for mul, term in ((node.left, node.right), (node.right, node.left)):
        while isinstance(mul, c_ast.Cast):
            mul = mul.expr
        if isinstance(mul, c_ast.BinaryOp) and mul.op == "*":
            yield mul, term


def global_id(node: c_ast.Node, resolve: Resolver) -> str | None:
    """'idx'/'idy' if ``node`` is block id * block size + thread id in some operand order,
    each operand as ``resolve`` reads it (a predefined id's name, or None)."""
    for mul, tid in products_plus_term(node):
        for (bid, dim, thread), gid in PARTS.items():
            if resolve(tid) == thread and {resolve(mul.left), resolve(mul.right)} == {bid, dim}:
                return gid
    return None


class BlockConstantIndex(NamedTuple):
    """A sum with block id * K and the thread id of one axis among its terms: the index by
    a block constant K (``product`` and ``thread`` are those two terms, ``rest`` the others,
    in order)."""

    axis: str
    constant: c_ast.Node
    product: c_ast.Node
    thread: c_ast.Node
    rest: list[c_ast.Node]


def sum_terms(node: c_ast.Node) -> list[c_ast.Node]:
    """The terms of a chain of ``+`` (``a * 196 + b * 14 + c``: three), left to right."""
    if isinstance(node, c_ast.BinaryOp) and node.op == "+":
        return sum_terms(node.left) + sum_terms(node.right)
    return [node]


def block_constant_index(node: c_ast.Node, resolve: Resolver) -> BlockConstantIndex | None:
    """The index by a block constant K if ``node`` is a sum one of whose terms is block id *
    K (through casts; K an integer literal or a name that is not an id) and another the same
    axis's thread id: ``blockIdx.x * BLOCK_SIZE + threadIdx.x`` in some operand order, or
    among more terms as generated code writes flat indices (tinygrad's ``(gidx1*196) +
    (gidx0*14) + lidx0``); None otherwise."""
    terms = sum_terms(node)
    if len(terms) < 2:
        return None
    for axis, (bid, _, thread, _) in GLOBAL_IDS.items():
        tid = next((t for t in terms if resolve(t) == thread), None)
        if tid is None:
            continue
        for term in terms:
            mul = term
            while isinstance(mul, c_ast.Cast):
                mul = mul.expr
            if not (isinstance(mul, c_ast.BinaryOp) and mul.op == "*"):
                continue
            for b, k in ((mul.left, mul.right), (mul.right, mul.left)):
                if resolve(b) == bid and resolve(k) is None and (
                        isinstance(k, c_ast.ID) or
                        (isinstance(k, c_ast.Constant) and k.type == "int")):
                    return BlockConstantIndex(axis, k, term, tid, [
                        t for t in terms if t is not term and t is not tid])
    return None


def with_id(index: BlockConstantIndex, node: c_ast.Node, gid: c_ast.Node) -> c_ast.Node:
    """The sum ``node`` (an index by a block constant) with the id ``gid`` in place of its
    block-id product and thread-id terms (the other terms as they were, in order)."""
    out = None
    for t in sum_terms(node):
        if t is index.thread:
            continue
        t = gid if t is index.product else t
        out = t if out is None else c_ast.BinaryOp("+", out, t, node.coord)
    return out


def alias_resolver(aliases: dict[str, str]) -> Resolver:
    """A resolver for :func:`global_id` and :func:`block_constant_index`: a predefined id's
    name, through casts and through locals that alias one (:func:`builtin_aliases`)."""
    def resolve(node: c_ast.Node) -> str | None:
        while isinstance(node, c_ast.Cast):
            node = node.expr
        if isinstance(node, PredefId):
            return node.name
        return aliases.get(node.name) if isinstance(node, c_ast.ID) else None
    return resolve


def builtin_aliases(proc: GProcedure) -> dict[str, str]:
    """Locals defined once as a block id, block size or thread id: ``int tx = threadIdx.x;``
    -> {'tx': 'tidx'}."""
    counts = assigned_names(proc.body)
    out = {}
    parts = {p for key in PARTS for p in key}
    for node, _ in walk(proc.body):
        if isinstance(node, c_ast.Decl) and node.init is not None and \
                counts.get(node.name) == 1 and isinstance(node.type, c_ast.TypeDecl):
            init = node.init
            while isinstance(init, c_ast.Cast):
                init = init.expr
            if isinstance(init, PredefId) and init.name in parts:
                out[node.name] = init.name
    return out


def constant_value(k: c_ast.Node, proc: GProcedure, module) -> int | None:
    """The value of a block constant: an integer literal's, or a macro's the compile fixes
    (GModule.fixed; a parameter or local of that name is no constant)."""
    if isinstance(k, c_ast.Constant):
        try:
            return int(k.value.rstrip("uUlL"), 0)
        except ValueError:
            return None
    if isinstance(k, c_ast.ID) and k.name in module.fixed and \
            k.name not in {p.name for p in proc.params} and \
            not any(isinstance(n, c_ast.Decl) and n.name == k.name for n, _ in walk(proc.func)):
        return module.fixed[k.name]
    return None
