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
error (naiveopt cannot pick its arguments), as are template-template parameters.

``__device__`` function templates (``template <typename T> __device__ T warpSum(T v)``) are
instances too: one helper per instance the code calls (``warpSum_float``), explicit or
deduced. A call inside a kernel template is concrete only in the kernel's instances, so the
file is instantiated in rounds: kernel templates first, then the device templates that no
remaining template calls; a device template nothing calls is dropped. Each round's
definitions follow the mark before the earlier rounds' (callees first, as C wants them).
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


#: Rounds of instantiation: a ``__device__`` template called from a kernel template's body
#: is instantiated in the round after the kernel's instances exist (its calls are concrete
#: there), one called from that device template's instance in the next.
ROUNDS = 4


def instantiate(path: str, source: str, defines: dict[str, str]) -> tuple[str, Instances]:
    """``source`` with each kernel template and ``__device__`` function template replaced by
    its instances (module docstring)."""
    found = Instances(lines=source.count("\n") + 1)
    if "template" not in source:
        return source, found
    text = source
    for number in range(ROUNDS):
        text, more = _round(path, text, defines, found, number == 0)
        if not more:
            break
    return text, found


def _round(path: str, source: str, defines: dict[str, str], found: Instances,
           first: bool) -> tuple[str, bool]:
    """One round: the kernel templates (``first`` round only: each must be instantiated) and
    the device templates the file calls concretely, replaced by their instances; device
    templates no concrete code calls are left for the next round, or, when nothing else
    changed, removed (nothing calls them). Returns the text and whether another round may
    find more."""
    tu = cs.parse(path, source, "cuda", defines)
    templates = [c for c in cs.top_level(tu.cursor)
                 if c.kind == K.FUNCTION_TEMPLATE and c.location.file is not None
                 and c.location.file.name == path]
    kernels = [c for c in templates
               if any(ch.kind == K.CUDAGLOBAL_ATTR for ch in c.get_children())]
    devices = [c for c in templates if c not in kernels and
               any(ch.kind == K.CUDADEVICE_ATTR for ch in c.get_children())]
    if not kernels and not devices:
        return source, False
    data = source.encode()
    edits: list[tuple[int, int, str]] = []          # (start, end, text) in bytes
    appended: list[tuple[str, str, int]] = []        # (defines, definition, template line)
    uses = {id(t): _uses(tu, t, path) for t in devices}
    # a device template is instantiated once no other template is left that might call it
    # (its calls there are not concrete yet): kernel templates first, then device templates
    # that no remaining one names
    texts = {id(t): data[t.extent.start.offset:t.extent.end.offset].decode() for t in devices}
    called = [] if kernels else [
        t for t in devices if uses[id(t)] and not any(
            re.search(rf"\b{re.escape(t.spelling)}\b", texts[id(o)])
            for o in devices if o is not t)]
    for template in kernels + called:
        kernel = template in kernels     # its instances are kernels the result names
        params = _params(template, path)
        numbers = {c.spelling for c in template.get_children()
                   if c.kind == K.TEMPLATE_NON_TYPE_PARAMETER}
        refs = uses.get(id(template)) or _uses(tu, template, path)
        first_use: dict[tuple[str, ...], int] = {}   # instance -> where the file first names it
        for ref, args in refs:
            first_use[args] = min(first_use.get(args, ref.extent.start.offset),
                                  ref.extent.start.offset)
        for m in _EXPLICIT.finditer(source):
            if m.group(1) != template.spelling:
                continue
            args = tuple(a.strip() for a in _split(m.group(2)))
            if len(args) == len(params):
                at = len(source[:m.start()].encode())
                first_use[args] = min(first_use.get(args, at), at)
            start, end = len(source[:m.start()].encode()), len(source[:m.end()].encode())
            edits.append((start, end, _blank(data[start:end].decode())))
        instances = sorted(first_use, key=first_use.get)
        if not instances:
            raise NaiveoptError(
                f"kernel template '{template.spelling}' is never instantiated in this file: "
                "naiveopt optimizes the instances a file uses (launch it as "
                f"{template.spelling}<...><<<grid, block>>>(...) in the file's host code, or "
                f"instantiate it: template __global__ void {template.spelling}<...>(...);)",
                path, template.location.line, template.location.column)
        head, bare, body, origin = _parts(template, data, params)
        origin = found.line(origin)      # a template line of the user's (not an instance's)
        prototypes = []
        for args in instances:
            name = _instance_name(template.spelling, args)
            if kernel:
                found.names[name] = f"{template.spelling}<{', '.join(args)}>"
            values = dict(zip(params, args))
            prototype = _substitute(_uncommented(head), template.spelling, name, values)
            prototypes.append(" ".join(prototype.split()) + ";")
            # a number argument is a macro of the instance's (MatrixMulCUDA_32_BLOCK_SIZE):
            # the analyses read a macro in an index as a block constant, as they do the
            # CUDA samples' BLOCK_SIZE, and the output keeps a name for it
            macros = {p: f"{name}_{p}" for p, a in values.items() if p in numbers}
            if kernel:
                found.constants[name] = tuple(macros.values())
            defines_text = "".join(f"#define {macros[p]} {_number(values[p])}\n"
                                   for p in macros)
            appended.append((defines_text, _substitute(bare + body, template.spelling, name,
                                                       {**values, **macros}), origin))
        start, end = template.extent.start.offset, template.extent.end.offset
        edits.append((start, end, " ".join(prototypes) +
                      "\n" * data[start:end].count(b"\n")))
        for ref, args in refs:
            edits.append((ref.extent.start.offset, ref.extent.end.offset,
                          _instance_name(template.spelling, args)))
    waiting = [t for t in devices if t not in called]
    if not edits and not any(uses[id(t)] for t in waiting):
        # no concrete call is left to any of them: nothing that remains calls them
        for template in waiting:
            start, end = template.extent.start.offset, template.extent.end.offset
            edits.append((start, end, _blank(data[start:end].decode())))
    out = bytearray(data)
    for start, end, text in sorted(edits, reverse=True):
        out[start:end] = text.encode()
    text = out.decode()
    if not appended:
        return text, False             # what is left (called, in a cycle) is an error later
    if not text.endswith("\n"):
        text += "\n"
    if _MARK not in text:
        text += _MARK + "\n"
    # this round's definitions go first after the mark: a later round's instances are what
    # the earlier ones call, and the output keeps the order (C wants a callee first)
    at = text.index(_MARK) + len(_MARK) + 1
    line = text[:at].count("\n") + 1
    added, spans = "", []
    for defines_text, definition, origin in appended:
        added += defines_text
        line += defines_text.count("\n")
        added += definition + "\n"
        count = definition.count("\n") + 1
        spans.append((line, line + count - 1, origin))
        line += count
    shift = added.count("\n")
    found.spans = spans + [(a + shift, b + shift, o) for a, b, o in found.spans]
    return text[:at] + added + text[at:], bool(waiting)


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


def _parts(template: ci.Cursor, data: bytes, params: list[str]
           ) -> tuple[str, str, str, int]:
    """(the function's head after ``template <...>``, the head with its default arguments
    blanked, its body from ``{``, the line the head starts on). The instance's prototype,
    which comes first, declares the defaults (``scalar_t slope = 0.01``) and its definition
    does not: C++ allows them once."""
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
    raw = bytearray(data[head_start:body_start])
    for parm in template.get_children():
        default = [c for c in parm.get_children() if c.kind.is_expression()] \
            if parm.kind == K.PARM_DECL else []
        if not default:
            continue
        equals = [t for t in parm.get_tokens() if t.spelling == "="]
        if equals and head_start <= equals[0].extent.start.offset < body_start:
            a = equals[0].extent.start.offset - head_start
            b = default[-1].extent.end.offset - head_start
            raw[a:b] = b" " * (b - a)
    bare = raw.decode()
    # the head's first line is the one its first character after the header lies on
    stripped = len(head) - len(head.lstrip())
    origin = data[:head_start + len(head[:stripped].encode())].count(b"\n") + 1
    return head.lstrip(), bare.lstrip(), data[body_start:end].decode(), origin


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
