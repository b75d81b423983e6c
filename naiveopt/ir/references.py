"""C++ reference parameters of device helpers, written for OpenCL C, which has none.

CUDA code returns several values from a helper through references (the CUDA samples'
Black-Scholes: ``BlackScholesBodyGPU(float &CallResult, float &PutResult, ...)``) and passes
vectors by const reference (``float dot3(const float3 &a, const float3 &b)``). The front end
keeps the type as written (``float &``), which a CUDA output prints back; OpenCL C needs:

- a ``const T &`` parameter passed by value: the helper only reads it, and the argument may
  be any expression (``dot3(make_float3(...), v)``);
- a ``T &`` parameter as a pointer ``T *p``, each use in the helper ``(*p)`` and each
  argument its address (``&callResult1``, ``&s[i]``; a reference parameter passed on is
  the pointer itself; a vector's component, whose address OpenCL C does not take, through
  a local read before the call and written back after it). The pointer points into the
  address space of its arguments (private for locals, __global for a kernel array's
  element, __local for a shared array's: the bitonic sort's ``swap(s[i], s[j])``); where
  calls pass references into two spaces, which OpenCL C 1.2 cannot take through one
  pointer, it is a located error rather than a silent wrong one.
"""
from __future__ import annotations

import copy

from pycparser import c_ast

from ..errors import error_at
from .build import fresh
from .rewrite import STATEMENT_SLOTS, identifiers, map_nodes, replace_child, walk


def reference_positions(helpers: list[c_ast.FuncDef]) -> dict[str, set[int]]:
    """Each helper's non-const reference parameters (name -> positions): the arguments a
    call may write through."""
    out = {}
    for helper in helpers:
        params = helper.decl.type.args.params if helper.decl.type.args else []
        refs = {k for k, d in enumerate(params) if (_reference(d) or (None, True))[1] is False}
        if refs:
            out[helper.decl.name] = refs
    return out


def _reference(decl: c_ast.Node) -> tuple[str, bool] | None:
    """(base type, const) of a reference parameter ``T &name``, or None."""
    if isinstance(decl, c_ast.Decl) and isinstance(decl.type, c_ast.TypeDecl) and \
            isinstance(decl.type.type, c_ast.IdentifierType):
        name = " ".join(decl.type.type.names)
        if name.endswith("&"):
            return name[:-1].strip(), "const" in decl.type.quals
    return None


def to_pointers(module, path: str) -> None:
    """Rewrite the reference parameters of ``module``'s helpers (module docstring) and the
    calls to them in every function's body."""
    helpers = module.helpers
    by_pointer: dict[str, set[int]] = {}
    for helper in helpers:
        params = helper.decl.type.args.params if helper.decl.type.args else []
        pointers = set()
        for k, decl in enumerate(params):
            ref = _reference(decl)
            if ref is None:
                continue
            base, const = ref
            decl.type.type.names = [base]
            if const:
                continue                        # by value
            pointers.add(decl.name)
            decl.type = c_ast.PtrDecl([], decl.type)
            by_pointer.setdefault(helper.decl.name, set()).add(k)
        if pointers:
            def deref(node: c_ast.Node, names=pointers) -> c_ast.Node:
                if isinstance(node, c_ast.ID) and node.name in names:
                    return c_ast.UnaryOp("*", node)
                return node
            helper.body = map_nodes(helper.body, deref)
    if not by_pointer:
        return
    params = {h.decl.name: list(h.decl.type.args.params) if h.decl.type.args else []
              for h in helpers}
    types = {name: {k: " ".join(params[name][k].type.type.type.names) for k in ks}
             for name, ks in by_pointer.items()}
    functions = [(h, {d.name: "global" for d in params[h.decl.name]
                      if isinstance(getattr(d, "type", None), c_ast.PtrDecl)})
                 for h in helpers] + \
        [(p.func, {q.name: q.address_space for q in p.params if q.is_pointer})
         for p in module.procedures]
    for func, _ in functions:
        _components_through_locals(func.body, by_pointer, types)
    spaces = _spaces(functions, by_pointer, params, path)
    for (name, k), space in spaces.items():
        if space != "private":
            params[name][k].type.type.quals.insert(0, f"__{space}")

    def address(node: c_ast.Node) -> c_ast.Node:
        if _call_to(node, by_pointer):
            for k in by_pointer[node.name.name]:
                arg = node.args.exprs[k]
                node.args.exprs[k] = arg.expr if isinstance(arg, c_ast.UnaryOp) and \
                    arg.op == "*" else c_ast.UnaryOp("&", arg)   # a reference passed on
        return node

    for func, _ in functions:
        map_nodes(func.body, address)


def _spaces(functions, by_pointer: dict[str, set[int]], params, path: str
            ) -> dict[tuple[str, int], str]:
    """The address space each reference parameter points into: that of every argument
    passed to it (a local: private; an element of a kernel's array: global; of a shared
    array: local; a reference passed on: that reference's), or a located error."""
    calls = []                  # (helper, position, argument, the caller's pointers, caller)
    for func, pointers in functions:
        arrays = {n.name: ("local" if {"__shared__", "__local"} & set(n.storage)
                           else "private")
                  for n, _ in walk(func.body) if isinstance(n, c_ast.Decl) and
                  isinstance(n.type, c_ast.ArrayDecl)}
        for node, _ in walk(func.body):
            if _call_to(node, by_pointer):
                for k in by_pointer[node.name.name]:
                    calls.append((node.name.name, k, node.args.exprs[k],
                                  {**arrays, **pointers}, func.decl.name))
    spaces: dict[tuple[str, int], str] = {}
    for _ in range(len(calls) + 1):
        changed = False
        for helper, k, arg, known, caller in calls:
            space = _space_of(arg, known, caller, params, spaces)
            if space is None:
                continue
            if space == "constant":
                raise error_at(arg.coord, f"argument {k + 1} of '{helper}' binds a "
                               "reference to constant memory, which the helper may write",
                               path)
            have = spaces.get((helper, k))
            if have is None:
                spaces[(helper, k)], changed = space, True
            elif have != space:
                raise error_at(arg.coord, f"argument {k + 1} of '{helper}' is a reference "
                               f"to {space} memory where another call passes {have} memory: "
                               "OpenCL C 1.2 has no generic address space for one pointer "
                               "to both", path)
        if not changed:
            break
    for helper, k, arg, known, caller in calls:
        if (helper, k) not in spaces:
            raise error_at(arg.coord, f"argument {k + 1} of '{helper}' is a reference to "
                           "memory whose address space is unknown (a local, an element of "
                           "an array or a reference parameter is)", path)
    return spaces


def _space_of(arg: c_ast.Node, known: dict[str, str], caller: str, params,
              spaces: dict[tuple[str, int], str]) -> str | None:
    """The address space of an argument bound to a reference (None: not known yet)."""
    if isinstance(arg, c_ast.UnaryOp) and arg.op == "*" and isinstance(arg.expr, c_ast.ID):
        mine = params.get(caller, [])
        k = next((k for k, d in enumerate(mine) if getattr(d, "name", None) ==
                  arg.expr.name), None)
        return spaces.get((caller, k)) if k is not None else None
    if isinstance(arg, c_ast.ID):
        return "private"
    root = arg
    while isinstance(root, c_ast.ArrayRef):
        root = root.name
    if isinstance(root, c_ast.ID) and root is not arg:
        return known.get(root.name)
    return None
def _call_to(node: c_ast.Node, by_pointer: dict[str, set[int]]) -> bool:
    return isinstance(node, c_ast.FuncCall) and isinstance(node.name, c_ast.ID) and \
        node.name.name in by_pointer and node.args is not None


def _components_through_locals(body: c_ast.Node, by_pointer: dict[str, set[int]],
                               types: dict[str, dict[int, str]]) -> None:
    """A vector's component passed by reference (``minmax(a, b, p.x, p.y);``): OpenCL C
    takes no address of a vector component, so a call that is a statement passes locals
    instead, read from the components before and written back after it."""
    taken = identifiers(body)
    calls = [(node, parent) for node, parent in walk(body) if _call_to(node, by_pointer)
             and isinstance(parent, tuple(STATEMENT_SLOTS))
             and any(isinstance(node.args.exprs[k], c_ast.StructRef)
                     for k in by_pointer[node.name.name])]
    for call, parent in calls:
        before, after = [], []
        for k in sorted(by_pointer[call.name.name]):
            arg = call.args.exprs[k]
            if not isinstance(arg, c_ast.StructRef):
                continue
            name = fresh(taken, "ref_" + arg.field.name)
            before.append(c_ast.Decl(name, [], [], [], [], c_ast.TypeDecl(
                name, [], None, c_ast.IdentifierType([types[call.name.name][k]])),
                copy.deepcopy(arg), None))
            after.append(c_ast.Assignment("=", arg, c_ast.ID(name)))
            call.args.exprs[k] = c_ast.ID(name)
        block = c_ast.Compound(before + [call] + after)
        if isinstance(parent, c_ast.Compound):
            at = next(i for i, item in enumerate(parent.block_items) if item is call)
            parent.block_items[at:at + 1] = [block]
        else:
            replace_child(parent, call, block)
