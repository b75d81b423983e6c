"""C text from c_ast trees, aware of the IR's extra nodes."""
from __future__ import annotations

from pycparser import c_ast, c_generator

from .nodes import PredefId


class KernelGenerator(c_generator.CGenerator):
    """pycparser's generator with minimal parentheses and predefined ids printed by name."""

    def __init__(self) -> None:
        super().__init__(reduce_parentheses=True)

    def visit_PredefId(self, n) -> str:  # noqa: N802 (pycparser's naming)
        return n.name

    def _is_simple_node(self, n) -> bool:
        return isinstance(n, PredefId) or super()._is_simple_node(n)


def to_c(node: c_ast.Node) -> str:
    """Print a c_ast node (statement, expression or function) as C."""
    return KernelGenerator().visit(node)
