"""Kernel templates, read as the instances the file launches.

CUDA code writes kernels as templates over a tile size or an element type (the CUDA samples'
``template <int BLOCK_SIZE> __global__ void MatrixMulCUDA(...)`` launched as
``MatrixMulCUDA<16>`` or ``<32>`` by the block size chosen at run time; ``template <typename
T>`` kernels launched on float and double). naiveopt optimizes code for known values, so
each instance is what it reads: libclang finds the instances the file uses (its host code's
launches, explicit or deduced, ``k<32><<<...>>>``, ``k<<<...>>>(float_ptr, ...)``, and
explicit instantiations ``template __global__ void k<float>(float *, int);``), and the file
is rewritten, before it is parsed, into one ordinary kernel per instance named for its
arguments (``MatrixMulCUDA_16``, ``scale_float``) with the template parameters replaced by
the arguments; the host code's launches name those kernels. Each output kernel's header
says which instance it is.

Line numbers stay the user's: the template's lines keep their count (the instances'
prototypes stand on its first line, so the host code may launch them) and the instances'
definitions follow the file's last line; :class:`Instances` maps a location inside one back
to the template's line. A kernel template that the file never instantiates is a located
error (naiveopt cannot pick its arguments), as are template-template parameters and
``__device__`` function templates (still "templates are not supported").
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import clang.cindex as ci

from ..errors import NaiveoptError
from . import clang_setup as cs

K = ci.CursorKind
#: The line before the instances' definitions: the host code's text ends there.
_MARK = "// naiveopt: kernel template instances"
_EXPLICIT = re.compile(r"\btemplate\s+__global__\s+void\s+(\w+)\s*<([^<>;]*)>\s*\([^;]*\)\s*;")


@dataclass
class Instances:
    """What :func:`instantiate` did: each instance kernel's template spelling, and where the
    lines of its definition came from."""

    lines: int = 0                                   # the user's file's line count
    names: dict[str, str] = field(default_factory=dict)     # instance -> "k<16>"
    # instance -> the macros of its number arguments (MatrixMulCUDA_16_BLOCK_SIZE)
    constants: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # (first physical line of a definition, its last, the template line it starts at)
    spans: list[tuple[int, int, int]] = field(default_factory=list)

    def line(self, physical: int) -> int:
        """The user's line for a line of the rewritten file."""
        for first, last, origin in self.spans:
            if first <= physical <= last:
                return origin + physical - first
        return physical

    def locate(self, err: NaiveoptError, path: str) -> NaiveoptError:
        """``err`` at the user's line where it points into an instance's definition."""
        if self.spans and err.line and err.line > self.lines and err.file in (None, path):
            err.line = self.line(err.line)
            err.col = None
        return err

    def relocate(self, module) -> None:
        """The module's kernel lines and tree coordinates at the user's lines; each
        instance kernel learns its template spelling (GProcedure.instance_of)."""
        from ..ir.rewrite import walk

        if self.names and _MARK in module.host_code:
            module.host_code = module.host_code[:module.host_code.index(_MARK)].rstrip() + "\n"
        for proc in module.procedures:
            proc.instance_of = self.names.get(proc.name, "")
            proc.instance_constants = self.constants.get(proc.name, ())
            proc.line = self.line(proc.line) if self.spans else proc.line
        for tree in [p.func for p in module.procedures] + list(module.helpers):
            for node, _ in walk(tree):
                coord = getattr(node, "coord", None)
                if isinstance(coord, str):
                    head, _, rest = coord.rpartition(":")
                    file, _, line = head.rpartition(":")
                    if self.spans and line.isdigit() and int(line) > self.lines:
                        node.coord = f"{file}:{self.line(int(line))}:{rest}"


def instantiate(path: str, source: str, defines: dict[str, str]) -> tuple[str, Instances]:
    """``source`` with each kernel template replaced by its instances (module docstring)."""
    found = Instances(lines=source.count("\n") + 1)
    if "template" not in source:
        return source, found
    tu = cs.parse(path, source, "cuda", defines)
    kernels = [c for c in tu.cursor.get_children()
               if c.kind == K.FUNCTION_TEMPLATE and c.location.file is not None
               and c.location.file.name == path
               and any(ch.kind == K.CUDAGLOBAL_ATTR for ch in c.get_children())]
    if not kernels:
        return source, found
    data = source.encode()
    edits: list[tuple[int, int, str]] = []          # (start, end, text) in bytes
    appended: list[tuple[str, str, int]] = []        # (defines, definition, template line)
    for template in kernels:
        params = _params(template, path)
        numbers = {c.spelling for c in template.get_children()
                   if c.kind == K.TEMPLATE_NON_TYPE_PARAMETER}
        refs = _uses(tu, template, path)
        first: dict[tuple[str, ...], int] = {}        # instance -> where the file first names it
        for ref, args in refs:
            first[args] = min(first.get(args, ref.extent.start.offset), ref.extent.start.offset)
        for m in _EXPLICIT.finditer(source):
            if m.group(1) != template.spelling:
                continue
            args = tuple(a.strip() for a in _split(m.group(2)))
            if len(args) == len(params):
                at = len(source[:m.start()].encode())
                first[args] = min(first.get(args, at), at)
            start, end = len(source[:m.start()].encode()), len(source[:m.end()].encode())
            edits.append((start, end, _blank(data[start:end].decode())))
        instances = sorted(first, key=first.get)
        if not instances:
            raise NaiveoptError(
                f"kernel template '{template.spelling}' is never instantiated in this file: "
                "naiveopt optimizes the instances a file uses (launch it as "
                f"{template.spelling}<...><<<grid, block>>>(...) in the file's host code, or "
                f"instantiate it: template __global__ void {template.spelling}<...>(...);)",
                path, template.location.line, template.location.column)
        head, body, origin = _parts(template, data, params)
        prototypes = []
        for args in instances:
            name = _instance_name(template.spelling, args)
            found.names[name] = f"{template.spelling}<{', '.join(args)}>"
            values = dict(zip(params, args))
            prototype = _substitute(_uncommented(head), template.spelling, name, values)
            prototypes.append(" ".join(prototype.split()) + ";")
            # a number argument is a macro of the instance's (MatrixMulCUDA_32_BLOCK_SIZE):
            # the analyses read a macro in an index as a block constant, as they do the
            # CUDA samples' BLOCK_SIZE, and the output keeps a name for it
            macros = {p: f"{name}_{p}" for p, a in values.items() if p in numbers}
            found.constants[name] = tuple(macros.values())
            defines = "".join(f"#define {macros[p]} {_number(values[p])}\n" for p in macros)
            appended.append((defines, _substitute(head + body, template.spelling, name,
                                                  {**values, **macros}), origin))
        start, end = template.extent.start.offset, template.extent.end.offset
        edits.append((start, end, " ".join(prototypes) +
                      "\n" * data[start:end].count(b"\n")))
        for ref, args in refs:
            edits.append((ref.extent.start.offset, ref.extent.end.offset,
                          _instance_name(template.spelling, args)))
    out = bytearray(data)
    for start, end, text in sorted(edits, reverse=True):
        out[start:end] = text.encode()
    text = out.decode()
    if not text.endswith("\n"):
        text += "\n"
    text += _MARK + "\n"
    line = text.count("\n") + 1
    for defines, definition, origin in appended:
        text += defines
        line += defines.count("\n")
        text += definition + "\n"
        count = definition.count("\n") + 1
        found.spans.append((line, line + count - 1, origin))
        line += count
    return text, found


def _params(template: ci.Cursor, path: str) -> list[str]:
    out = []
    for child in template.get_children():
        if child.kind in (K.TEMPLATE_TYPE_PARAMETER, K.TEMPLATE_NON_TYPE_PARAMETER):
            out.append(child.spelling)
        elif child.kind == K.TEMPLATE_TEMPLATE_PARAMETER:
            raise NaiveoptError(f"template template parameter '{child.spelling}' of kernel "
                                f"'{template.spelling}' is not supported", path,
                                child.location.line, child.location.column)
    return out


def _uses(tu: ci.TranslationUnit, template: ci.Cursor, path: str):
    """Each reference to an instance of ``template`` (a DECL_REF_EXPR in the host code) with
    the instance's arguments."""
    refs = []
    where = (template.location.line, template.location.column)
    for node in tu.cursor.walk_preorder():
        if node.kind != K.DECL_REF_EXPR or node.location.file is None or \
                node.location.file.name != path:
            continue
        ref = node.referenced
        if ref is None or ref.spelling != template.spelling or \
                (ref.location.line, ref.location.column) != where:
            continue
        count = ref.get_num_template_arguments()
        if count <= 0:
            continue
        args = []
        for i in range(count):
            kind = ref.get_template_argument_kind(i)
            if kind == ci.TemplateArgumentKind.INTEGRAL:
                args.append(str(ref.get_template_argument_value(i)))
            elif kind == ci.TemplateArgumentKind.TYPE:
                args.append(ref.get_template_argument_type(i).spelling)
            else:
                raise NaiveoptError(f"an instance of kernel template '{template.spelling}' "
                                    "whose arguments are not numbers or types", path,
                                    node.location.line, node.location.column)
        refs.append((node, tuple(args)))
    return refs


def _parts(template: ci.Cursor, data: bytes, params: list[str]) -> tuple[str, str, int]:
    """(the function's head after ``template <...>``, its body from ``{``, the line the head
    starts on)."""
    tokens = list(template.get_tokens())
    depth, at = 0, 0
    for at, token in enumerate(tokens):
        if token.spelling == "<":
            depth += 1
        elif token.spelling in (">", ">>"):
            depth -= len(token.spelling)
            if depth <= 0:
                break
    head_start = tokens[at].extent.end.offset
    body = next(c for c in template.get_children() if c.kind == K.COMPOUND_STMT)
    body_start, end = body.extent.start.offset, template.extent.end.offset
    head = data[head_start:body_start].decode()
    # the head's first line is the one its first character after the header lies on
    stripped = len(head) - len(head.lstrip())
    origin = data[:head_start + len(head[:stripped].encode())].count(b"\n") + 1
    return head.lstrip(), data[body_start:end].decode(), origin


def _substitute(text: str, name: str, instance: str, values: dict[str, str]) -> str:
    """``text`` with the kernel's name replaced by the instance's and each template
    parameter by its argument (a number in parentheses where it is a negative one), outside
    comments and string literals."""
    def word(m: re.Match) -> str:
        w = m.group(0)
        if w == name:
            return instance
        if w in values:
            v = values[w]
            return f"({v})" if v.startswith("-") else v
        return w

    out, at = [], 0
    for m in re.finditer(r"//[^\n]*|/\*.*?\*/|\"(?:\\.|[^\"\\])*\"|'(?:\\.|[^'\\])*'", text,
                         re.S):
        out.append(re.sub(r"\b[A-Za-z_]\w*\b", word, text[at:m.start()]))
        out.append(m.group(0))
        at = m.end()
    out.append(re.sub(r"\b[A-Za-z_]\w*\b", word, text[at:]))
    return "".join(out)


def _number(value: str) -> str:
    return f"({value})" if value.startswith("-") else value


def _instance_name(name: str, args: tuple[str, ...]) -> str:
    """``MatrixMulCUDA_16``, ``scale_float``, ``k_unsigned_int_m1``."""
    parts = []
    for a in args:
        a = a.replace("*", " ptr ").replace("-", "m")
        parts.append("_".join(re.findall(r"\w+", a)))
    return "_".join([name] + parts)


def _uncommented(text: str) -> str:
    return re.sub(r"//[^\n]*|/\*.*?\*/", " ", text, flags=re.S)


def _split(text: str) -> list[str]:
    return [part for part in (p.strip() for p in text.split(",")) if part]


def _blank(text: str) -> str:
    return "\n" * text.count("\n")
