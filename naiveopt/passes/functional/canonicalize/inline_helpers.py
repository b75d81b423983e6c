"""Helper inlining: a call to a ``__device__`` helper (an OpenCL helper function) that reads
memory through a pointer argument or computes an integer (an index, a clamped coordinate)
is replaced by the helper's value written out as one expression.

Image and science code reads its arrays through helpers (``pixel(raw, y - 1, x, H, W)``,
``at(A, i, j, n)``, ``clamp_coord(x + dx, W)``). A call is opaque to the analyses: the read
of ``raw`` inside ``pixel`` is not a memory expression of the kernel, so no pass can stage,
vectorize or coalesce it. nvcc inlines such helpers anyway; naiveopt does so first, so that
the passes see the reads. Helpers of floating-point math alone (``sigmoid(x)``) hide no read
or index and stay calls.

A helper is inlined when its body is an expression: scalar locals defined once and scalars
assigned in straight-line code (``v = e;``, and ``if (c) v = e;`` with else-ifs assigning the
same scalar: the clamp helpers' ``if (v < lo) v = lo; if (v > hi) v = hi;``, read as
``c ? e : v`` in order), then a ``return`` (``int r = y * w; return r + x;``), or a chain of
``if (c) return a; ... return b;`` (the clamp helpers written with returns), which becomes
``c ? a : ...``. The value is what the call computes:

* each argument is converted to its parameter's type, as the call converts it: the argument
  is written as it is where its type (inferred from declarations and literals) is the
  parameter's, and cast to it otherwise; a pointer argument must be a name;
* each returned value is converted to the return type the same way (``c ? a : b`` then has
  that type in every branch, as the returns had);
* the arguments must be free of side effects (an argument may be read twice, or not at all,
  where the helper reads its parameter twice, or in one branch): the call of a helper
  evaluates them once, and an expression that changes nothing reads the same values each
  time;
* names the helper reads from the file (``__constant__`` data, macros' values) must not be
  declared in the kernel, where the inlined expression would read the kernel's own.

A helper may read the thread ids (``__device__ int global_index() { return blockIdx.x *
blockDim.x + threadIdx.x; }``): written out, they are the IR's ids, as the predefined pass makes
the kernel's own. Helpers that use barriers or atomics, write memory, loop, or are called by
each other recursively stay calls, with a remark saying why. The naive kernel that verification runs
still calls them.
"""
from __future__ import annotations

import copy

from pycparser import c_ast

from ....ir import GProcedure, PredefId
from ....ir.rewrite import map_nodes, side_effect_free, walk
from ....ir.symbolic import SIGNED_IDS
from ...manager import PassContext
from ..builtins import PURE_CALLS
from ..predefined import name_ids, to_predefined
from .base import CanonicalizationPass
from .locals import declarations

#: Thread-id structs: a helper reading them depends on the thread that calls it.
_THREAD_STRUCTS = {"threadIdx", "blockIdx", "blockDim", "gridDim"}
#: An inlined value larger than this (in tree nodes) is left a call: locals read several
#: times are copied into every use.
MAX_NODES = 600
#: Type words that say nothing about a value's type.
_QUALIFIERS = {"const", "volatile", "restrict", "__restrict__", "__restrict", "__global",
               "__local", "__constant", "__private", "global", "local", "constant"}
#: Arithmetic types an operator computes in as they are (no promotion).
_ARITHMETIC = {"int", "unsigned int", "long", "unsigned long", "long long",
               "unsigned long long", "float", "double"}
_SPELLINGS = {"unsigned": "unsigned int", "signed": "int", "signed int": "int",
              "long int": "long", "long long int": "long long", "unsigned long int":
              "unsigned long", "unsigned long long int": "unsigned long long"}


class InlineHelpers(CanonicalizationPass):
    name = "inline-helpers"

    def rewrite(self, proc: GProcedure, ctx: PassContext) -> bool:
        helpers = {h.decl.name: h for h in ctx.module.helpers}
        called = _called(proc.body, helpers)
        if not called:
            return False
        templates, why_not = helper_templates(helpers)
        kernel_names = {p.name for p in proc.params} | set(declarations(proc.body))
        types = _kernel_types(proc)
        counts: dict[str, int] = {}
        left: dict[str, str] = {}

        def inline(node: c_ast.Node) -> c_ast.Node:
            if not (isinstance(node, c_ast.FuncCall) and isinstance(node.name, c_ast.ID)):
                return node
            name = node.name.name
            if name not in templates:
                if name in why_not:
                    left.setdefault(name, why_not[name])
                return node
            template = templates[name]
            if template.reads_ids and proc.pragma.block_id_axes:
                left.setdefault(name, "it reads thread ids, and the kernel's blockIdx."
                                f"{proc.pragma.block_id_axes[0]} is read as a global id")
                return node
            value, why = _instantiate(template, node, types, kernel_names)
            if value is None:
                left.setdefault(name, why)
                return node
            counts[name] = counts.get(name, 0) + 1
            # the helper's built-in ids as the IR's, as the predefined pass made the kernel's
            return to_predefined(value) if template.reads_ids else value

        for item in list(proc.body.block_items or []):
            new = map_nodes(item, inline)
            if new is not item:
                proc.body.block_items[proc.body.block_items.index(item)] = new
        for name, why in sorted(left.items()):
            self.missed(proc, ctx, f"'{name}' stays a call: {why}")
        if not counts:
            return False
        name_ids(proc)          # ids the helpers brought get their C names
        said = ", ".join(f"{name} ({n} call{'s' if n > 1 else ''})"
                         for name, n in counts.items())
        self.applied(proc, ctx, "helpers written out where they are called, so that the "
                     f"analyses see their reads and indices: {said}")
        return True


class Template:
    """A helper's value as one expression over its parameters (IDs of their names)."""

    def __init__(self, helper: c_ast.FuncDef, expr: c_ast.Node) -> None:
        self.name = helper.decl.name
        self.expr = expr
        self.params = [(p.name, _param_type(p)) for p in _params(helper)]
        self.free = {n.name for n in _names(expr)} - {name for name, _ in self.params}
        # reads threadIdx, blockIdx... (``__device__ int gid() { return blockIdx.x * ...; }``)
        self.reads_ids = any(_thread_struct(n) for n, _ in walk(expr))


def helper_templates(helpers: dict[str, c_ast.FuncDef]
                     ) -> tuple[dict[str, Template], dict[str, str]]:
    """The templates of the helpers worth inlining (a pointer parameter or an integer
    result), their calls of each other inlined first; and why each other one that would be
    worth it is not inlined."""
    templates: dict[str, Template] = {}
    why_not: dict[str, str] = {}

    def build(name: str, active: tuple[str, ...]) -> None:
        if name in templates or name in why_not:
            return
        helper = helpers[name]
        if not _worth_inlining(helper):
            return
        if name in active:
            why_not[name] = "it calls itself"
            return
        expr, why = _expression(helper)
        if expr is None:
            why_not[name] = why
            return
        for inner in _called(expr, helpers):
            build(inner, active + (name,))
        types = {pname: ptype for pname, ptype in
                 ((p.name, _param_type(p)) for p in _params(helper))}
        problems: list[str] = []

        def inner_call(node: c_ast.Node) -> c_ast.Node:
            if isinstance(node, c_ast.FuncCall) and isinstance(node.name, c_ast.ID) and \
                    node.name.name in templates:
                value, why = _instantiate(templates[node.name.name], node, types,
                                          set(types))
                if value is None:
                    problems.append(why)
                    return node
                return value
            return node

        expr = map_nodes(expr, inner_call)
        if not side_effect_free(expr, PURE_CALLS):
            why_not[name] = problems[0] if problems else \
                "it calls a function naiveopt does not inline"
            return
        if sum(1 for _ in walk(expr)) > MAX_NODES:
            why_not[name] = f"its value written out exceeds {MAX_NODES} nodes"
            return
        templates[name] = Template(helper, expr)

    for name in helpers:
        build(name, ())
    return templates, why_not


def _worth_inlining(helper: c_ast.FuncDef) -> bool:
    """A helper hiding a read (a pointer parameter) or an index (an integer result)."""
    ret = _type_key(helper.decl.type.type)
    params = _params(helper)
    return any(isinstance(p.type, c_ast.PtrDecl) for p in params) or \
        (ret is not None and ret in _ARITHMETIC and ret not in ("float", "double"))


def _params(helper: c_ast.FuncDef) -> list[c_ast.Decl]:
    args = helper.decl.type.args
    if args is None:
        return []
    return [p for p in args.params if isinstance(p, c_ast.Decl) and p.name]


def _param_type(p: c_ast.Decl) -> str | None:
    if isinstance(p.type, c_ast.PtrDecl):
        inner = _type_key(p.type.type)
        return None if inner is None else inner + "*"
    return _type_key(p.type)


def _type_key(node: c_ast.Node) -> str | None:
    """A scalar type's name, qualifiers dropped and spellings unified (``unsigned`` is
    ``unsigned int``); None for anything else."""
    while isinstance(node, (c_ast.Typename, c_ast.TypeDecl)):
        node = node.type
    if not isinstance(node, c_ast.IdentifierType):
        return None
    words = [w for name in node.names for w in name.split() if w not in _QUALIFIERS]
    text = " ".join(words)
    return _SPELLINGS.get(text, text) or None


def _expression(helper: c_ast.FuncDef) -> tuple[c_ast.Node | None, str]:
    """The helper's value as one expression over its parameters, or (None, why not)."""
    ret = helper.decl.type.type
    if _type_key(ret) is None:
        return None, "it returns no scalar"
    params = _params(helper)
    if helper.decl.type.args is not None and \
            len(params) != len([p for p in helper.decl.type.args.params
                                if not _is_void(p)]):
        return None, "a parameter has no name"
    for p in params:
        if _param_type(p) is None:
            return None, f"parameter '{p.name}' is not a scalar or a pointer to one"
    for n, _ in walk(helper.body):
        if isinstance(n, PredefId):
            return None, "it reads thread ids"
    items = list(helper.body.block_items or [])
    types = {p.name: _param_type(p) for p in params}
    type_nodes = {p.name: _type_ret_node(p.type) for p in params
                  if not isinstance(p.type, c_ast.PtrDecl)}
    # each name's value now, over the parameters as called: a local defined once, or a scalar
    # assigned by straight-line statements (``v = e;``, ``if (c) v = e;``, the clamp helpers'
    # ``if (v < lo) v = lo;``), each read in terms of the values before it
    values: dict[str, c_ast.Node] = {}
    while items:
        stmt = items[0]
        if isinstance(stmt, c_ast.Decl):
            key = _type_key(stmt.type)
            if key is None or stmt.init is None or stmt.storage or stmt.name in types or \
                    not side_effect_free(stmt.init):
                return None, f"local '{stmt.name}' is not a scalar defined once"
            value = _substitute(copy.deepcopy(stmt.init), values)
            values[stmt.name] = _converted(value, key, _type_ret_node(stmt.type), types)
            types[stmt.name] = key
            type_nodes[stmt.name] = _type_ret_node(stmt.type)
        else:
            assigned = _assignment(stmt, type_nodes, types)
            if assigned is None:
                break
            name, value = assigned
            values[name] = _converted(_substitute(value, values), types[name],
                                      type_nodes[name], types)
        items.pop(0)
    expr, why = _chain(items, ret, types)
    if expr is None:
        return None, why
    for n, _ in walk(expr):
        if isinstance(n, c_ast.Assignment) or isinstance(n, c_ast.UnaryOp) and \
                n.op in ("++", "--", "p++", "p--"):
            return None, "it assigns"
    return _substitute(expr, values), ""


def _assignment(stmt: c_ast.Node, type_nodes: dict[str, c_ast.Node],
                types: dict[str, str | None]) -> tuple[str, c_ast.Node] | None:
    """(the scalar, its new value) of ``v = e;`` or of ``if (c) v = e; [else if (c2) v = e2;]
    [else v = e3;]`` (every branch assigning v alone), the latter as ``c ? e : c2 ? e2 : v``
    with each branch converted to v's type as its assignment converts it; None for anything
    else. Conditions and values must be free of side effects: a ternary evaluates the same
    ones the ifs did."""
    if isinstance(stmt, c_ast.Assignment):
        if stmt.op != "=" or not isinstance(stmt.lvalue, c_ast.ID) or \
                stmt.lvalue.name not in type_nodes or not side_effect_free(stmt.rvalue):
            return None
        return stmt.lvalue.name, copy.deepcopy(stmt.rvalue)
    branches: list[tuple[c_ast.Node, c_ast.Node]] = []
    name = None
    node = stmt
    while isinstance(node, c_ast.If):
        then = _single(node.iftrue)
        if not isinstance(then, c_ast.Assignment) or \
                not side_effect_free(node.cond, PURE_CALLS):
            return None
        found = _assignment(then, type_nodes, types)
        if found is None or name not in (None, found[0]):
            return None
        name = found[0]
        branches.append((copy.deepcopy(node.cond), found[1]))
        node = node.iffalse
    if name is None:
        return None
    value: c_ast.Node = c_ast.ID(name)
    if node is not None:
        last = _assignment(_single(node), type_nodes, types)
        if last is None or last[0] != name:
            return None
        value = last[1]
    key = _type_key(type_nodes[name])
    cast = (lambda e: _converted(e, key, type_nodes[name], types)) if key else (lambda e: e)
    value = cast(value)
    for cond, branch in reversed(branches):
        value = c_ast.TernaryOp(cond, cast(branch), value)
    return name, value


def _is_void(p: c_ast.Node) -> bool:
    return isinstance(p, c_ast.Typename) and _type_key(p.type) == "void"


def _type_ret_node(t: c_ast.Node) -> c_ast.Node:
    while isinstance(t, c_ast.TypeDecl):
        t = t.type
    return t


def _chain(items: list[c_ast.Node], ret: c_ast.Node, types: dict[str, str | None]
           ) -> tuple[c_ast.Node | None, str]:
    """``if (c) return a; [else] ... return b;`` as ``c ? a : ...``."""
    if not items:
        return None, "a path through it returns no value"
    first = items[0]
    if isinstance(first, c_ast.Compound):
        return _chain(list(first.block_items or []) + items[1:], ret, types)
    if isinstance(first, c_ast.Return):
        if first.expr is None:
            return None, "it returns no value"
        return _converted(copy.deepcopy(first.expr), _type_key(ret), _type_ret_node(ret),
                          types), ""
    if isinstance(first, c_ast.If):
        then = _single(first.iftrue)
        if not isinstance(then, c_ast.Return) or then.expr is None:
            return None, "an if does more than return a value"
        if not side_effect_free(first.cond, PURE_CALLS):
            return None, "a condition has side effects"
        a, why = _chain([then], ret, types)
        if a is None:
            return None, why
        rest = ([first.iffalse] if first.iffalse is not None else []) + items[1:]
        b, why = _chain(rest, ret, types)
        if b is None:
            return None, why
        return c_ast.TernaryOp(copy.deepcopy(first.cond), a, b), ""
    return None, "its body is more than locals and returns"


def _single(stmt: c_ast.Node) -> c_ast.Node:
    while isinstance(stmt, c_ast.Compound) and len(stmt.block_items or []) == 1:
        stmt = stmt.block_items[0]
    return stmt


def _names(expr: c_ast.Node) -> list[c_ast.ID]:
    """The identifiers an expression reads (a member's name, ``v.x``, is none)."""
    fields = {id(n.field) for n, _ in walk(expr) if isinstance(n, c_ast.StructRef)}
    return [n for n, _ in walk(expr) if isinstance(n, c_ast.ID) and id(n) not in fields]


def _substitute(expr: c_ast.Node, values: dict[str, c_ast.Node]) -> c_ast.Node:
    reads = {id(n) for n in _names(expr)}

    def fn(node: c_ast.Node) -> c_ast.Node:
        if id(node) in reads and node.name in values:
            return copy.deepcopy(values[node.name])
        return node
    return map_nodes(expr, fn)


def _converted(expr: c_ast.Node, key: str | None, type_node: c_ast.Node,
               types: dict[str, str | None]) -> c_ast.Node:
    """``expr`` converted to the type ``key`` (written ``type_node``): as it is where that is
    its type already, else cast."""
    if key is not None and expr_type(expr, types) == key:
        return expr
    names = copy.deepcopy(type_node)
    if isinstance(names, c_ast.IdentifierType):
        names.names = [w for w in names.names if w not in _QUALIFIERS] or names.names
    return c_ast.Cast(c_ast.Typename(None, [], None, c_ast.TypeDecl(None, [], None, names)),
                      expr)


def _thread_struct(node: c_ast.Node) -> bool:
    return isinstance(node, c_ast.StructRef) and isinstance(node.name, c_ast.ID) and \
        node.name.name in _THREAD_STRUCTS


def expr_type(node: c_ast.Node, types: dict[str, str | None]) -> str | None:
    """The type C gives a (side-effect-free) expression, where declarations and literals
    say it without promotions naiveopt would have to model; None where unsure."""
    if _thread_struct(node):
        return "unsigned int"
    if isinstance(node, c_ast.ID):
        return types.get(node.name)
    if isinstance(node, PredefId):
        return "int" if node.name in SIGNED_IDS else "unsigned int"
    if isinstance(node, c_ast.Constant):
        value = node.value.lower()
        if node.type == "int":
            return "int" if value.isdigit() and int(value) < 2 ** 31 else None
        if node.type in ("float", "double"):
            return "float" if value.endswith("f") else "double" \
                if not value.endswith("l") else None
        return None
    if isinstance(node, c_ast.Cast):
        return _type_key(node.to_type)
    if isinstance(node, c_ast.ArrayRef):
        base = expr_type(node.name, types)
        return base[:-1] if base and base.endswith("*") else None
    if isinstance(node, c_ast.UnaryOp):
        if node.op == "!":
            return "int"
        inner = expr_type(node.expr, types)
        return inner if node.op in ("-", "+") and inner in _ARITHMETIC else None
    if isinstance(node, c_ast.BinaryOp):
        if node.op in ("<", "<=", ">", ">=", "==", "!=", "&&", "||"):
            return "int"
        left, right = expr_type(node.left, types), expr_type(node.right, types)
        if node.op in ("<<", ">>"):
            return left if left in _ARITHMETIC and right in _ARITHMETIC and \
                left not in ("float", "double") else None
        if left == right and left in _ARITHMETIC and \
                (node.op != "%" or left not in ("float", "double")):
            return left
        return None
    if isinstance(node, c_ast.TernaryOp):
        a, b = expr_type(node.iftrue, types), expr_type(node.iffalse, types)
        return a if a == b and a in _ARITHMETIC else None
    return None


def _kernel_types(proc: GProcedure) -> dict[str, str | None]:
    """The types of the kernel's parameters and of its locals declared once."""
    types: dict[str, str | None] = {}
    for p in proc.params:
        key = _SPELLINGS.get(p.base_type, p.base_type)
        types[p.name] = key + "*" if p.is_pointer else key
    for name, decls in declarations(proc.body).items():
        if name in types or len(decls) != 1:
            types[name] = None
            continue
        d = decls[0]
        types[name] = _param_type(d) if isinstance(d.type, (c_ast.TypeDecl, c_ast.PtrDecl)) \
            else None
    return types


def _called(node: c_ast.Node, helpers: dict) -> list[str]:
    found: list[str] = []
    for n, _ in walk(node):
        if isinstance(n, c_ast.FuncCall) and isinstance(n.name, c_ast.ID) and \
                n.name.name in helpers and n.name.name not in found:
            found.append(n.name.name)
    return found


def _instantiate(template: Template, call: c_ast.FuncCall, types: dict[str, str | None],
                 kernel_names: set[str]) -> tuple[c_ast.Node | None, str]:
    """The template with the call's arguments in place, or (None, why not)."""
    args = list(call.args.exprs) if call.args is not None else []
    if len(args) != len(template.params):
        return None, "it is called with a different number of arguments"
    captured = sorted(template.free & kernel_names)
    if captured:
        return None, f"it reads '{captured[0]}', which the kernel declares too"
    values: dict[str, c_ast.Node] = {}
    for arg, (pname, ptype) in zip(args, template.params):
        if not side_effect_free(arg, PURE_CALLS):
            return None, "an argument has side effects"
        if ptype is not None and ptype.endswith("*"):
            if not isinstance(arg, c_ast.ID) or not (types.get(arg.name) or "").endswith("*"):
                return None, f"pointer argument '{pname}' is not a pointer's name"
            values[pname] = arg
        else:
            values[pname] = _converted(arg, ptype, c_ast.IdentifierType(ptype.split()),
                                       types)
    return _substitute(copy.deepcopy(template.expr), values), ""
