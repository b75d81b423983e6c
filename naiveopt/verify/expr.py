"""A tiny, safe evaluator for size expressions in metadata and pragmas ("H*W", "ceil(N, 16)").

Only integer arithmetic on names and literals is allowed; nothing in a metadata file or pragma
can run code through it.
"""
from __future__ import annotations

import ast
import keyword
import operator
import re

_BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
           ast.FloorDiv: operator.floordiv, ast.Div: operator.floordiv, ast.Mod: operator.mod}
_FUNCS = {"ceil": lambda a, b: -(-a // b), "min": min, "max": max}
#: a C cast to an integer type (``(size_t) rows`` in a guard's bound): sizes are non-negative
#: and in range, so it changes no value
_INT_CAST = re.compile(r"\(\s*(?:const\s+)?(?:(?:unsigned|signed|long|short|int|char)\s*)+\)|"
                       r"\(\s*(?:const\s+)?(?:std::)?u?int(?:8|16|32|64)?_t\s*\)|"
                       r"\(\s*(?:const\s+)?(?:std::)?(?:size_t|ptrdiff_t|unsigned)\s*\)")


def evaluate(text: str | int | float, names: dict[str, int | float]) -> int | float:
    """Evaluate an arithmetic expression over ``names``; raise ValueError if it is not one."""
    if isinstance(text, (int, float)):
        return text
    if callable(text):          # a dimension computed from the sizes (verify/extents.Extent)
        return text(names)
    if "(" in str(text):
        text = _INT_CAST.sub(" ", str(text))
    if any(keyword.iskeyword(k) for k in names) or re.search(r"[A-Za-z]", str(text)):
        # C names that are Python keywords (a size parameter named 'class' or 'global')
        names = {_unkeyword(k): v for k, v in names.items()}
        text = re.sub(r"(?<![\w.])[A-Za-z_]\w*", lambda m: _unkeyword(m.group(0)), str(text))
    try:
        tree = ast.parse(str(text).strip(), mode="eval")
    except SyntaxError as exc:
        raise ValueError(f"not an arithmetic expression: {text!r}") from exc
    return _eval(tree.body, names, str(text))


def _unkeyword(name: str) -> str:
    return f"{name}__kw" if keyword.iskeyword(name) else name


def _eval(node: ast.AST, names: dict[str, int | float], text: str) -> int | float:
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return node.value
    if isinstance(node, ast.Name):
        if node.id not in names:
            raise ValueError(f"unknown name {node.id!r} in {text!r}")
        return names[node.id]
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        return _BINOPS[type(node.op)](_eval(node.left, names, text),
                                      _eval(node.right, names, text))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = _eval(node.operand, names, text)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
            node.func.id in _FUNCS and not node.keywords:
        return _FUNCS[node.func.id](*[_eval(a, names, text) for a in node.args])
    raise ValueError(f"unsupported expression {text!r}")
