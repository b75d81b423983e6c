"""C index expressions as sympy expressions, and their decomposition (paper 002, pass (4)).

An index such as ``A[(idx)*width + i + 5]`` becomes ``idx*width + i + 5``; sympy expands it and
:func:`decompose` sorts each additive term by what varies in it: nothing (constant), a thread id
(predefined), a loop iterator (loop), or something naiveopt cannot model (unresolved).

Integer ``min``/``max`` (OpenCL's ``clamp`` among them, and the ternaries that spell them) are
modelled only for a SymbolEnv that asks for them (``signed``: the names of signed integer
type): a pass that stages clamped coordinates (``min(max(x + dx, 0), W - 1)``, the stencil's)
reads them as :class:`IntMin` / :class:`IntMax`, which are Unresolved to every other analysis.
"""
from __future__ import annotations

import sympy
from pycparser import c_ast

from .gprocedure import IndexDecomposition
from .literals import integer_value, split_integer
from .nodes import PredefId

#: Thread ids that vary between threads of a block / between blocks.
THREAD_VARYING = {"idx", "idy", "tidx", "tidy", "bidx", "bidy"}
#: The symbol of ``blockIdx.z`` for an env that models planes (SymbolEnv.planes); its name is
#: the C text, so that code built from an expression holding it reads the plane.
BLOCK_Z = "blockIdx.z"


class Unresolved(sympy.Function):
    """An opaque value in an index (data-dependent read, division, call...)."""


class IntMin(Unresolved):
    """C's ``min`` of two signed integers. An Unresolved, so that an index holding one stays
    opaque to the analyses that do not look for it (see analysis/clamps.py for the one that
    does): two threads may meet at one clamped element, which no affine reasoning sees."""

    is_integer = True


class IntMax(Unresolved):
    """C's ``max`` of two signed integers (see :class:`IntMin`)."""

    is_integer = True


class CDiv(sympy.Function):
    """C's integer division (truncating toward zero) of thread- and loop-invariant operands:
    ``MASK_WIDTH / 2`` in ``i - MASK_WIDTH / 2``. Opaque to the algebra but uniform, so an
    index holding it still decomposes (its term is constant); it folds once the operands are
    numbers and prints back as C division."""

    is_integer = True

    @classmethod
    def eval(cls, a, b):
        if a.is_Integer and b.is_Integer and b != 0:
            q = abs(int(a)) // abs(int(b))
            return sympy.Integer(q if (int(a) < 0) == (int(b) < 0) else -q)
        return None

    def _ccode(self, printer) -> str:
        return f"(({printer._print(self.args[0])}) / ({printer._print(self.args[1])}))"


#: The z built-ins as symbols (SymbolEnv.z_ids), named like the IR's x and y ids.
Z_IDS = {"threadIdx": "tidz", "blockIdx": "bidz", "blockDim": "blockDimZ", "gridDim": "gridDimZ"}


class CMod(sympy.Function):
    """C's integer remainder (``idx % T``), read only by an env with ``divisions``: the
    analysis that bounds indices over a domain of numbers (verify/extents.py)."""

    is_integer = True

    @classmethod
    def eval(cls, a, b):
        if a.is_Integer and b.is_Integer and b != 0:
            r = abs(int(a)) % abs(int(b))
            return sympy.Integer(-r if int(a) < 0 else r)
        return None


class SymbolEnv:
    """Maps identifiers to sympy symbols with a role each: predefined, loop, uniform, alias.

    ``signed``, when given, names the identifiers of signed integer type: then ``min`` and
    ``max`` of operands computed in signed arithmetic become IntMin/IntMax (in
    unsigned arithmetic ``max(x - 1, 0)`` is not a clamp: ``x - 1`` wraps at 0).

    ``planes``: ``blockIdx.z`` (a 3-D grid's plane, the same for the threads of a block) is the
    uniform symbol :data:`BLOCK_Z` instead of an opaque value, for a pass that reasons about
    one block at a time (the stencil's windows); between blocks it differs.

    ``z_ids``: every z built-in (``threadIdx.z``, ``blockIdx.z``, ``blockDim.z``,
    ``gridDim.z``) is a symbol of :data:`Z_IDS` instead of an opaque value, for an analysis
    that bounds them (verify/extents.py); the passes, which transform x and y only, keep them
    opaque.

    ``divisions``: ``a / b`` and ``a % b`` of any integer operands are :class:`CDiv` and
    :class:`CMod` (a flattened id split into row and column, ``idx / T``, ``idx % T``); the
    passes, whose algebra needs uniform quotients, keep them opaque."""

    def __init__(self, uniforms: set[str], loops: set[str], aliases: dict[str, c_ast.Node],
                 signed: set[str] | None = None, planes: bool = False, z_ids: bool = False,
                 divisions: bool = False):
        self.uniforms = uniforms
        self.loops = loops
        self.aliases = aliases
        self.signed = signed
        self.planes = planes
        self.z_ids = z_ids
        self.divisions = divisions
        self._counter = 0

    def scoped(self, loops: set[str]) -> "SymbolEnv":
        """The same symbols with only ``loops`` (the enclosing loops) as loop iterators."""
        env = SymbolEnv(self.uniforms, loops, self.aliases, self.signed, self.planes,
                        self.z_ids, self.divisions)
        env._counter = self._counter
        return env

    def fresh_unresolved(self, text: str) -> sympy.Expr:
        self._counter += 1
        return Unresolved(sympy.Symbol(f"u{self._counter}_{text}"))


def to_sympy(node: c_ast.Node, env: SymbolEnv, depth: int = 0) -> sympy.Expr:
    """Convert an integer C expression into sympy; unknown parts become Unresolved(...)."""
    if depth > 50:
        return env.fresh_unresolved("deep")
    if isinstance(node, PredefId):
        return sympy.Symbol(node.name, integer=True)
    if isinstance(node, c_ast.Constant):
        value = integer_value(node.value) if node.type != "float" else None
        if value is None:
            return env.fresh_unresolved("const" if node.type != "float" else "float")
        return sympy.Integer(value)
    if isinstance(node, c_ast.ID):
        name = node.name
        if name in env.loops or name in env.uniforms:
            return sympy.Symbol(name, integer=True)
        if name in env.aliases:
            return to_sympy(env.aliases[name], env, depth + 1)
        return env.fresh_unresolved(name)
    if isinstance(node, c_ast.Cast):
        return to_sympy(node.expr, env, depth + 1)
    if isinstance(node, c_ast.UnaryOp):
        if node.op == "-":
            return -to_sympy(node.expr, env, depth + 1)
        if node.op == "+":
            return to_sympy(node.expr, env, depth + 1)
        return env.fresh_unresolved("unary")
    if isinstance(node, c_ast.BinaryOp):
        if node.op in ("+", "-", "*"):
            left = to_sympy(node.left, env, depth + 1)
            right = to_sympy(node.right, env, depth + 1)
            return left + right if node.op == "+" else (
                left - right if node.op == "-" else left * right)
        shift = integer_value(node.right.value) if node.op == "<<" and isinstance(
            node.right, c_ast.Constant) else None
        if shift is not None and 0 <= shift < 63:
            return to_sympy(node.left, env, depth + 1) * 2 ** shift
        if node.op == "/":
            left = to_sympy(node.left, env, depth + 1)
            right = to_sympy(node.right, env, depth + 1)
            if _uniform(left, env) and _uniform(right, env) and right != 0 or \
                    env.divisions and right != 0:
                return CDiv(left, right)
        if node.op == "%" and env.divisions:
            right = to_sympy(node.right, env, depth + 1)
            if right != 0:
                return CMod(to_sympy(node.left, env, depth + 1), right)
        return env.fresh_unresolved(
            {"/": "div", "%": "mod"}.get(node.op, "op"))
    if env.z_ids and isinstance(node, c_ast.StructRef) and isinstance(node.name, c_ast.ID) \
            and node.type == "." and isinstance(node.field, c_ast.ID) and \
            node.field.name == "z" and node.name.name in Z_IDS:
        return sympy.Symbol(Z_IDS[node.name.name], integer=True)
    if env.planes and isinstance(node, c_ast.StructRef) and isinstance(node.name, c_ast.ID) \
            and node.name.name == "blockIdx" and node.type == "." and \
            isinstance(node.field, c_ast.ID) and node.field.name == "z":
        return sympy.Symbol(BLOCK_Z, integer=True)
    if isinstance(node, c_ast.FuncCall) and isinstance(node.name, c_ast.ID) and \
            node.name.name in _MUL24 and node.args is not None and len(node.args.exprs) == 2:
        # OpenCL's mul24/mad24 (CUDA's __mul24): the product wherever the call is defined
        # (both operands in 24 bits), as SDK kernels index rows (``A[mad24(r, cols, c)]``)
        a, b = node.args.exprs
        return to_sympy(a, env, depth + 1) * to_sympy(b, env, depth + 1)
    if env.signed is not None and isinstance(node, (c_ast.FuncCall, c_ast.TernaryOp)):
        found = _min_max(node, env, depth)
        if found is not None:
            return found
    return env.fresh_unresolved(type(node).__name__)


#: 24-bit multiplies (the IR's CUDA names, and OpenCL's where a tree is written back).
_MUL24 = {"__mul24", "__umul24", "mul24"}
#: The signed thread ids (declared ``const int``); the others read CUDA's unsigned built-ins.
SIGNED_IDS = {"idx", "idy"}


def _min_max(node: c_ast.FuncCall | c_ast.TernaryOp, env: SymbolEnv, depth: int
             ) -> sympy.Expr | None:
    """``min(a, b)``, ``max(a, b)`` (OpenCL's ``clamp(v, lo, hi)`` is ``min(max(v, lo),
    hi)`` in the IR: passes/functional/opencl_to_cuda.py) and the ternaries ``c ? a : b`` whose condition compares ``a`` with ``b`` (``x > 0 ?
    x - 1 : 0`` is ``max(x - 1, 0)``), as IntMin/IntMax: min and max of signed integer
    operands, ternaries whose comparison is of signed operands; None for anything else."""
    if isinstance(node, c_ast.TernaryOp):
        cond = node.cond
        # the comparison must be signed to be the integers' (``x - 1 >= 0u`` is not); the
        # values it picks between are the same values either way (a ternary of an unsigned
        # and an int is unsigned, which an int local converts back), as everywhere else in
        # this model of integer arithmetic without wrap-around
        if not isinstance(cond, c_ast.BinaryOp) or cond.op not in ("<", "<=", ">", ">=") or \
                not all(_signed(n, env) for n in (cond.left, cond.right)):
            return None
        left, right = (to_sympy(n, env, depth + 1) for n in (cond.left, cond.right))
        a, b = (to_sympy(n, env, depth + 1) for n in (node.iftrue, node.iffalse))
        e = nonnegative(cond.op, left, right)
        found = picks(e, a, b)
        if found is not None:
            return found
        # a clamp helper's if-return chain, ``v < 0 ? 0 : (v >= n ? n - 1 : v)``: one branch
        # clamps v on one side, the test clamps it on the other. Where lo <= hi its value is
        # max(min(v, hi), lo), and only there: it is written in that form, which the stencil
        # (the one reader of clamps, analysis/clamps.py) stages only where it proves lo <= hi
        for nested, other, first in ((b, a, True), (a, b, False)):
            if not isinstance(nested, (IntMin, IntMax)):
                continue
            for v, bound in (nested.args, nested.args[::-1]):
                outer = picks(e, other, v) if first else picks(e, v, other)
                if isinstance(outer, IntMax) and isinstance(nested, IntMin):
                    return IntMax(IntMin(v, bound), other)
                if isinstance(outer, IntMin) and isinstance(nested, IntMax):
                    return IntMax(IntMin(v, other), bound)
        return None
    name = node.name.name if isinstance(node.name, c_ast.ID) else None
    args = list(node.args.exprs) if node.args is not None else []
    if name not in ("min", "max") or len(args) != 2 or not all(_signed(a, env) for a in args):
        return None
    values = [to_sympy(a, env, depth + 1) for a in args]
    return (IntMin if name == "min" else IntMax)(*values)


def nonnegative(op: str, left: sympy.Expr, right: sympy.Expr) -> sympy.Expr:
    """The integer comparison ``left op right`` as ``e >= 0`` (``l > r`` is ``l - r - 1 >= 0``)."""
    return {">": left - right - 1, ">=": left - right, "<": right - left - 1,
            "<=": right - left}[op]


def picks(e: sympy.Expr, a: sympy.Expr, b: sympy.Expr) -> sympy.Expr | None:
    """``c ? a : b`` as IntMax(a, b) or IntMin(a, b), where ``e >= 0`` is the condition c;
    None where c does not compare a with b.

    c compares a with b where ``a - b`` (for a max; ``b - a`` for a min) is ``k * e + r``
    with constants k > 0 and 0 <= r <= k: for integer e, ``a - b >= 0`` holds exactly where
    ``e >= -r / k``, which is ``e >= 0`` for r < k, and ``a - b > 0`` exactly where
    ``e > -r / k``, which is ``e >= 0`` for r > 0; either way c picks the larger. That
    reads ``x >= w ? w - 1 : x`` (k = 1) and also a reflection at a border, ``x < 0 ? -x : x``
    (|x|: a - b = -2x = 2e + 2) and ``x >= w ? 2 * w - 2 - x : x`` (b - a = 2e + 2)."""
    for difference, kind in ((a - b, IntMax), (b - a, IntMin)):
        if _scaled(sympy.expand(difference), sympy.expand(e)):
            return kind(a, b)
    return None


def _scaled(d: sympy.Expr, e: sympy.Expr) -> bool:
    """Whether ``d`` is ``k * e + r`` with constants k > 0 and 0 <= r <= k (:func:`picks`)."""
    terms = [t for t in e.as_coefficients_dict() if not t.is_number]
    if not terms:
        k = sympy.Integer(1)
    else:
        k = d.coeff(terms[0]) / e.coeff(terms[0])
        if not k.is_number or not k > 0:
            return False
    r = sympy.expand(d - k * e)
    return bool(r.is_number and 0 <= r <= k)


def _signed(node: c_ast.Node, env: SymbolEnv) -> bool:
    """Whether an integer C expression is computed in signed arithmetic: names of signed
    type (env.signed), signed thread ids, literals without an unsigned suffix that fit an
    int, casts to a signed type, and +, -, *, min, max and ternaries of those."""
    if isinstance(node, PredefId):
        return node.name in SIGNED_IDS
    if isinstance(node, c_ast.ID):
        return node.name in env.signed
    if isinstance(node, c_ast.Constant):
        parts = split_integer(node.value) if node.type != "float" else None
        return parts is not None and "u" not in parts[1].lower() and \
            integer_value(node.value) < 2 ** 31
    if isinstance(node, c_ast.Cast):
        return signed_type(node.to_type.type)
    if isinstance(node, c_ast.UnaryOp) and node.op in ("-", "+"):
        return _signed(node.expr, env)
    if isinstance(node, c_ast.BinaryOp) and node.op in ("+", "-", "*"):
        return _signed(node.left, env) and _signed(node.right, env)
    if isinstance(node, c_ast.TernaryOp):
        return all(_signed(n, env) for n in (node.cond.left, node.cond.right, node.iftrue,
                                             node.iffalse)) \
            if isinstance(node.cond, c_ast.BinaryOp) else False
    if isinstance(node, c_ast.FuncCall) and isinstance(node.name, c_ast.ID) and \
            node.name.name in ("min", "max") and node.args is not None:
        return all(_signed(a, env) for a in node.args.exprs)
    return False


#: The words of a signed integer type (``const long``, ``signed int``...).
SIGNED_WORDS = {"int", "long", "short", "signed", "const", "volatile"}


def signed_type(node: c_ast.Node) -> bool:
    """Whether a declared type (a TypeDecl, or its IdentifierType) is a signed integer."""
    if isinstance(node, c_ast.TypeDecl):
        node = node.type
    return isinstance(node, c_ast.IdentifierType) and signed_words(node.names)


def signed_words(words: list[str]) -> bool:
    """Whether a type written as these words (``["const", "int"]``) is a signed integer."""
    return set(words) <= SIGNED_WORDS and bool(set(words) & {"int", "long", "short", "signed"})


def _uniform(expr: sympy.Expr, env: SymbolEnv) -> bool:
    """Whether an integer expression is the same for every thread and loop iteration."""
    return not expr.has(Unresolved) and all(_classify(s, env) == "uniform"
                                            for s in expr.free_symbols)


def _classify(symbol: sympy.Symbol, env: SymbolEnv) -> str:
    if symbol.name in THREAD_VARYING or symbol.name in ("blockDimX", "blockDimY", "gridDimX",
                                                        "gridDimY"):
        return "uniform" if symbol.name.startswith(("blockDim", "gridDim")) else "predefined"
    if symbol.name in env.loops:
        return "loop"
    return "uniform"


#: Results of :func:`decompose` and :func:`recover_2d` by (index, the loop iterators among its
#: symbols): passes re-analyse a kernel after each rewrite, and choosing among variants builds
#: dozens, nearly all of whose indices were seen before (conv: 673 decompositions, 4 s of
#: sympy). Both depend on the environment only through which symbols are loop iterators.
_MEMO: dict[tuple, object] = {}
_MEMO_LIMIT = 100_000


def _memo_key(kind: str, expr: sympy.Expr, env: SymbolEnv) -> tuple:
    return kind, expr, frozenset(s.name for s in expr.free_symbols if s.name in env.loops)


def _memoized(key: tuple, compute):
    try:
        return _MEMO[key]
    except KeyError:
        pass
    value = compute()
    if len(_MEMO) >= _MEMO_LIMIT:
        _MEMO.clear()
    _MEMO[key] = value
    return value


def decompose(expr: sympy.Expr, env: SymbolEnv) -> IndexDecomposition:
    """Split an index into constant, predefined, loop and unresolved terms."""
    d = _memoized(_memo_key("decompose", expr, env), lambda: _decompose(expr, env))
    # a copy: callers own their decomposition's dicts and list
    return IndexDecomposition(d.constant, dict(d.predefined), dict(d.loop), list(d.unresolved))


def _decompose(expr: sympy.Expr, env: SymbolEnv) -> IndexDecomposition:
    expanded = sympy.expand(expr)
    constant = sympy.Integer(0)
    predefined: dict[str, sympy.Expr] = {}
    loop: dict[str, sympy.Expr] = {}
    unresolved: list[sympy.Expr] = []
    for term in sympy.Add.make_args(expanded):
        if term.has(Unresolved):
            unresolved.append(term)
            continue
        varying = [s for s in term.free_symbols if _classify(s, env) != "uniform"]
        if not varying:
            constant += term
            continue
        var = varying[0]
        # an expanded term linear in ``var`` is ``coeff * var`` (a product): anything else
        # (var squared, var inside a quotient or a call) leaves more than var in ``rest``
        coeff, rest = term.as_independent(var, as_Add=False)
        if len(varying) > 1 or rest != var:
            unresolved.append(term)
            continue
        bucket = predefined if _classify(var, env) == "predefined" else loop
        bucket[var.name] = bucket.get(var.name, sympy.Integer(0)) + coeff
    return IndexDecomposition(constant, predefined, loop, unresolved)


def recover_2d(expr: sympy.Expr, env: SymbolEnv
               ) -> tuple[tuple[sympy.Expr, sympy.Expr], sympy.Expr] | None:
    """Recover ``index = y*W + x`` as ((y, x), W), or None.

    W is a thread- and loop-invariant factor of the index as written — a size parameter, a
    macro constant, or a compound such as ``W + K - 1`` reached through a local — or, failing
    that, the largest integer coefficient that splits the terms cleanly. The best candidate
    puts the varying part in y and leaves x with none of y's thread ids and loop iterators.
    """
    return _memoized(_memo_key("recover_2d", expr, env), lambda: _recover_2d(expr, env))


def _recover_2d(expr: sympy.Expr, env: SymbolEnv
                ) -> tuple[tuple[sympy.Expr, sympy.Expr], sympy.Expr] | None:
    if expr.has(Unresolved):
        return None
    expanded = sympy.expand(expr)
    best = None
    width = sympy.Dummy("width", integer=True)
    for w in _width_candidates(expr, expanded, env):
        y = sympy.expand(sympy.expand(expr.xreplace({w: width})).coeff(width, 1))
        if y == 0 or y.has(width):
            continue
        x = sympy.expand(expanded - sympy.expand(y * w))
        if x.has(width) or (w.is_Symbol and x.has(w)):
            continue
        varying_y = {s for s in y.free_symbols if _classify(s, env) != "uniform"}
        varying_x = {s for s in x.free_symbols if _classify(s, env) != "uniform"}
        score = (bool(varying_y), not (varying_y & varying_x), not w.is_Symbol)
        if best is None or score > best[0]:
            best = (score, (y, x), w)
        if score == (True, True, True):     # no later candidate can beat it
            break
    if best is not None:
        return best[1], best[2]
    return _recover_literal_width(expanded, env)


def _width_candidates(expr: sympy.Expr, expanded: sympy.Expr, env: SymbolEnv
                      ) -> list[sympy.Expr]:
    """Invariant factors of the index's terms as written, then invariant symbols."""
    def invariant(e: sympy.Expr) -> bool:     # a quotient (CDiv) is an offset, not a width
        return bool(e.free_symbols) and not e.has(CDiv) and all(
            _classify(s, env) == "uniform" and s.name not in ("blockDimX", "blockDimY")
            for s in e.free_symbols)

    out: list[sympy.Expr] = []
    for term in sympy.Add.make_args(expr):
        for factor in sympy.Mul.make_args(term):
            if invariant(factor) and not factor.is_Symbol and factor not in out:
                out.append(factor)
    out += sorted((s for s in expanded.free_symbols if invariant(s)), key=lambda s: s.name)
    return out


def _recover_literal_width(expanded: sympy.Expr, env: SymbolEnv
                           ) -> tuple[tuple[sympy.Expr, sympy.Expr], sympy.Expr] | None:
    coeffs = []
    for term in sympy.Add.make_args(expanded):
        c, _ = term.as_coeff_Mul()
        if term.free_symbols and c.is_Integer and abs(c) > 1:
            coeffs.append(abs(int(c)))
    if not coeffs:
        return None
    width = max(coeffs)
    y, x = sympy.Integer(0), sympy.Integer(0)
    for term in sympy.Add.make_args(expanded):
        c, rest = term.as_coeff_Mul()
        if term.free_symbols and c.is_Integer and int(c) % width == 0:
            y += (int(c) // width) * rest
        else:
            x += term
    if y == 0:
        return None
    return (y, x), sympy.Integer(width)
