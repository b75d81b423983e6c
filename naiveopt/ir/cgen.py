"""C text from c_ast trees, aware of the IR's extra nodes."""
from __future__ import annotations

from pycparser import c_ast, c_generator

from .async_copy import AsyncCopy, AsyncFence, print_copy, print_fence
from .nodes import TEXTURE_ELEMENTS, PredefId, TexFetch
from .typenames import TypeName
from .vector import VectorLoad, VectorStore, print_load, print_store


class KernelGenerator(c_generator.CGenerator):
    """pycparser's generator with minimal parentheses and predefined ids printed by name."""

    def __init__(self) -> None:
        super().__init__(reduce_parentheses=True)

    def visit_PredefId(self, n) -> str:  # noqa: N802 (pycparser's naming)
        return n.name

    def visit_TypeName(self, n: TypeName) -> str:  # noqa: N802
        return n.spelling

    def visit_Cast(self, n: c_ast.Cast) -> str:  # noqa: N802
        """A cast of an expression list is OpenCL's vector literal ``(float2)(a, b)``
        (pycparser would write ``(float2)((a, b))``, a comma expression splatted)."""
        if isinstance(n.expr, c_ast.ExprList):
            lanes = ", ".join(self._visit_expr(e) for e in n.expr.exprs)
            return f"({self._generate_type(n.to_type, emit_declname=False)})({lanes})"
        return super().visit_Cast(n)

    def visit_VectorLoad(self, n: VectorLoad) -> str:  # noqa: N802
        return print_load(n, self.visit(n.ref))

    def visit_VectorStore(self, n: VectorStore) -> str:  # noqa: N802
        # a statement: pycparser's statement printer adds ';' only to the node types it knows
        return print_store(n, self.visit(n.ref), self.visit(n.value)) + ";"

    def visit_AsyncCopy(self, n: AsyncCopy) -> str:  # noqa: N802
        return print_copy(n, self.visit(n.dst), self.visit(n.src),
                          None if n.ok is None else self.visit(n.ok))

    def visit_AsyncFence(self, n: AsyncFence) -> str:  # noqa: N802
        return print_fence(n)

    def visit_TexFetch(self, n: TexFetch) -> str:  # noqa: N802
        """``tex1Dfetch<T>(tex, i)`` (CUDA) or ``read_imageT(image, i)`` (OpenCL); an OpenCL
        width-2 fetch reads two texels of the width-1 image (see ``texture_param``)."""
        index = self.visit(n.index)
        if n.dialect == "cuda":
            return f"tex1Dfetch<{n.value_type}>({n.param}, {index})"
        read = TEXTURE_ELEMENTS[n.elem][2]
        if n.width == 4:
            return f"{read}({n.param}, {index})"
        if n.width == 1:
            return f"{read}({n.param}, {index}).x"
        base = f"2 * {self._parenthesize_unless_simple(n.index)}"
        return (f"(({n.value_type})({read}({n.param}, {base}).x, "
                f"{read}({n.param}, {base} + 1).x))")

    def _is_simple_node(self, n) -> bool:
        return isinstance(n, (PredefId, VectorLoad)) or super()._is_simple_node(n)


def to_c(node: c_ast.Node) -> str:
    """Print a c_ast node (statement, expression or function) as C."""
    return KernelGenerator().visit(node)
