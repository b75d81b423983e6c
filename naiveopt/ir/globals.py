"""File-scope data (GModule.globals): which kernels read it, and how each dialect spells it.

CUDA keeps a ``__constant__`` / ``__device__`` declaration at file scope; the host fills an
uninitialized one with ``cudaMemcpyToSymbol`` before the launch. OpenCL C has program-scope
``__constant`` data only with an initializer and no symbols a host could write, so there:

- an initialized global stays at program scope: ``__constant float coeff[3] = {...};``
  (a read-only ``__device__`` global too: the front end rejects kernels that write one);
- an uninitialized one becomes a kernel argument, appended after the kernel's own arguments
  of every kernel that reads it, itself or through ``__device__`` helpers (which take it as an
  extra parameter too, and every call passes it on): ``__constant float *M`` for
  ``__constant__`` data, ``__global const float *M`` for a ``__device__`` array, the value for
  a scalar. The list is fixed at parse time (GProcedure.global_args), so the naive kernel and
  the optimized one take the same arguments, which the launch sidecar names.
"""
from __future__ import annotations

import copy

from pycparser import c_ast

from .cgen import to_c
from .gprocedure import GlobalVar, GModule, GProcedure
from .rewrite import walk


def names_read(node: c_ast.Node, names: set[str]) -> set[str]:
    """The names of ``names`` that ``node`` mentions."""
    return {n.name for n, _ in walk(node) if isinstance(n, c_ast.ID) and n.name in names}


def _callees(node: c_ast.Node) -> set[str]:
    return {n.name.name for n, _ in walk(node)
            if isinstance(n, c_ast.FuncCall) and isinstance(n.name, c_ast.ID)}


def helper_globals(module: GModule) -> dict[str, set[str]]:
    """For each helper, the globals it reads itself or through the helpers it calls."""
    names = {g.name for g in module.globals}
    direct = {h.decl.name: names_read(h.body, names) for h in module.helpers}
    calls = {h.decl.name: _callees(h.body) & set(direct) for h in module.helpers}
    changed = True
    while changed:                      # transitive closure over the (acyclic) call graph
        changed = False
        for name in direct:
            for callee in calls[name]:
                if not direct[callee] <= direct[name]:
                    direct[name] |= direct[callee]
                    changed = True
    return direct


def kernel_globals(module: GModule, proc: GProcedure,
                   helpers: dict[str, set[str]] | None = None) -> list[GlobalVar]:
    """The globals ``proc`` reads, itself or through helpers, in source order."""
    helpers = helper_globals(module) if helpers is None else helpers
    names = {g.name for g in module.globals}
    used = names_read(proc.body, names)
    for callee in _callees(proc.body) & set(helpers):
        used |= helpers[callee]
    return [g for g in module.globals if g.name in used]


def declaration(g: GlobalVar, dialect: str) -> str:
    """The file-scope declaration of ``g`` in ``dialect`` (OpenCL: initialized ones only)."""
    decl = copy.copy(g.decl)
    if dialect == "cuda":
        decl.storage = ["__constant__" if g.space == "constant" else "__device__"]
    else:
        decl.storage = ["__constant"]
    decl.funcspec = []
    return to_c(decl).rstrip().rstrip(";") + ";"


def parameter(g: GlobalVar) -> c_ast.Decl:
    """The OpenCL kernel parameter that carries a host-filled global (module docstring)."""
    base = c_ast.TypeDecl(g.name, ["const"] if g.space != "constant" or g.const else [],
                          None, c_ast.IdentifierType([g.base_type]))
    if not g.dims:
        return c_ast.Decl(g.name, [], [], [], [], base, None, None)
    base.quals = ["__constant" if g.space == "constant" else "__global"] + base.quals
    inner: c_ast.Node = base
    array = g.decl.type
    dims = []
    while isinstance(array, c_ast.ArrayDecl):
        dims.append(array.dim)
        array = array.type
    for dim in reversed(dims[1:]):          # float (*M)[3] for M[K][3]
        inner = c_ast.ArrayDecl(inner, copy.deepcopy(dim), [])
    return c_ast.Decl(g.name, [], [], [], [], c_ast.PtrDecl([], inner), None, None)


def parameter_text(g: GlobalVar) -> str:
    return to_c(parameter(g)).rstrip().rstrip(";")


def pass_as_arguments(module: GModule) -> None:
    """Append each kernel's host-filled globals to its parameters (OpenCL), and to the
    helpers that read them, passing them on at every call (module docstring)."""
    by_name = {g.name: g for g in module.globals}
    helpers = helper_globals(module)
    extra = {name: [g.name for g in module.globals if g.name in used and g.host_filled]
             for name, used in helpers.items()}

    def pass_on(body: c_ast.Node) -> None:
        for node, _ in walk(body):
            if isinstance(node, c_ast.FuncCall) and isinstance(node.name, c_ast.ID) and \
                    extra.get(node.name.name):
                args = node.args.exprs if node.args is not None else []
                node.args = c_ast.ExprList(list(args) + [c_ast.ID(n)
                                                          for n in extra[node.name.name]])

    def append(func: c_ast.FuncDef, names: list[str], last: int = 0) -> None:
        """``names`` as parameters after ``func``'s own, before its ``last`` ones (the sizes
        a bounds guard added come after the globals: textures.param_layout)."""
        if not names:
            return
        decl = func.decl.type
        params = list(decl.args.params) if decl.args is not None else []
        params = [p for p in params if not (isinstance(p, c_ast.Typename) and
                                            to_c(p).strip() == "void")]
        at = len(params) - last
        decl.args = c_ast.ParamList(params[:at] + [parameter(by_name[n]) for n in names] +
                                    params[at:])

    for helper in module.helpers:
        pass_on(helper.body)
        append(helper, extra.get(helper.decl.name, []))
    for proc in module.procedures:
        pass_on(proc.body)
        append(proc.func, proc.global_args, len(proc.size_params))


def describe(g: GlobalVar) -> str:
    """``float M[MASK_WIDTH]``: the data's type and shape as written."""
    return g.base_type + " " + g.name + "".join(f"[{d}]" for d in g.dims)


def elements(g: GlobalVar) -> str:
    """The element count as a C expression of the dims as written."""
    if not g.dims:
        return "1"
    return " * ".join(f"({d})" if not d.isidentifier() and not d.isdigit() else d
                      for d in g.dims)
