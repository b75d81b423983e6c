"""Launch sites in host code: ``k<<<grid, block[, smem[, stream]]>>>(args)``, found, judged,
and rewritten to call the kernel's launcher.

An optimized kernel needs another launch than its naive input. A whole program (``main`` with
``cudaMalloc``, the launch, the check) optimized in place would launch the new kernel with the
old geometry; instead every launch of a kernel the output optimizes is rewritten to call the
``NAME_launch`` function written next to it (launcher.py), with the same arguments and stream,
and nothing else of the host code changes: comments, layout and every other token stay as
written.

Host code is plain text to naiveopt (clang parses it only so that its errors can be told
apart from the kernels'), so launch sites are found by a small lexer that knows what C++ text
is not code (comments, string and character literals, preprocessor lines). A kernel is left
naive, its launches as written, when any use of it cannot be rewritten safely:

- its name appears other than as ``NAME<<<...>>>(...)`` (a function pointer,
  ``cudaLaunchKernel((void *)NAME, ...)``, ``cudaFuncSetAttribute(NAME, ...)``, a launch
  inside a ``#define``): the geometry there is the naive one and naiveopt cannot change it;
- an argument reads the launch's own geometry (``k<<<blocks, threads>>>(x, blocks * threads)``
  with ``blocks`` the grid): the launcher changes the grid, and with it what the argument
  meant;
- the launch is malformed (no argument list, a number of arguments other than the kernel's):
  nvcc judges it as written.

The dynamic shared-memory size of a launch (its third configuration argument) is dropped: the
kernels naiveopt accepts declare no ``extern __shared__`` arrays, so it only reserved memory.
"""
from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Callable

_TOKEN = re.compile(r"""
    (?P<comment>//[^\n]*|/\*.*?\*/)
  | (?P<pp>^[ \t]*\#(?:\\\n|[^\n])*)
  | (?P<literal>"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')
  | (?P<ident>[A-Za-z_]\w*)
  | (?P<number>\.?\d(?:[\w.]|[eEpP][+-])*)
  | (?P<punct><<<|>>>|::|->|[(){}\[\],;.])
  | (?P<other>\S)
""", re.X | re.S | re.M)

_OPEN, _CLOSE = "([{", ")]}"


@dataclass
class Token:
    kind: str
    text: str
    start: int
    end: int


def tokens(text: str) -> list[Token]:
    """The code tokens of C++ text: comments, literals and preprocessor lines are one token
    each, so that nothing inside them is taken for code."""
    return [Token(m.lastgroup or "other", m.group(), m.start(), m.end())
            for m in _TOKEN.finditer(text) if not m.group().isspace()]


@dataclass
class LaunchSite:
    """One use of a kernel's name in host code: a launch (``config``/``args`` set) or another
    reference; ``problem`` says why it cannot be rewritten ('' where it can)."""

    kernel: str
    start: int                      # offsets of the launch's text: the name .. its ')'
    end: int
    line: int
    column: int
    config: list[str] = field(default_factory=list)   # grid, block[, smem[, stream]] as written
    args: list[str] = field(default_factory=list)     # the arguments as written (layout kept)
    problem: str = ""

    @property
    def stream(self) -> str | None:
        """The launch's stream argument as written, or None (the default stream)."""
        return self.config[3].strip() if len(self.config) > 3 else None


def _split(text: str, toks: list[Token], lo: int, hi: int) -> list[str]:
    """The comma-separated parts of ``toks[lo:hi]`` at bracket depth 0, as written."""
    if lo >= hi:
        return []
    parts, depth, begin = [], 0, toks[lo].start
    for t in toks[lo:hi]:
        if t.text in _OPEN:
            depth += 1
        elif t.text in _CLOSE:
            depth -= 1
        elif t.text == "," and depth == 0:
            parts.append(text[begin:t.start])
            begin = t.end
    parts.append(text[begin:toks[hi - 1].end])
    return parts


def _closing(toks: list[Token], i: int, closer: str) -> int | None:
    """The index of the token that closes the group opened before ``toks[i]``: ``closer``
    at bracket depth 0 (``>>>`` or ``)``), or None where the text ends first."""
    depth = 0
    for j in range(i, len(toks)):
        text = toks[j].text
        if depth == 0 and text == closer:
            return j
        if text in _OPEN:
            depth += 1
        elif text in _CLOSE:
            depth -= 1
            if depth < 0:
                return None
    return None


def find_launch_sites(text: str, kernels: dict[str, int],
                      in_host: Callable[[int, int], bool] | None = None) -> list[LaunchSite]:
    """Every use of the kernels' names in ``text`` (``kernels``: name -> parameter count), in
    order, each a launch to rewrite or a use that keeps its kernel naive (``problem``).
    ``in_host(line, column)``: whether a place is host code (uses elsewhere, the kernels'
    own definitions, are not the host's); preprocessor lines count wherever they are, but
    ``#include`` and ``#pragma naiveopt``."""
    toks = tokens(text)
    sites = []
    line_starts = [0] + [m.end() for m in re.finditer(r"\n", text)]

    def located(name: str, start: int, end: int, **kw) -> LaunchSite:
        return LaunchSite(name, start, end, *_line_col(line_starts, start), **kw)

    i = 0
    while i < len(toks):
        t = toks[i]
        if t.kind == "pp":
            directive = re.match(r"#\s*(\w+)(\s+\w+)?", t.text.lstrip())
            words = (directive.group(1), (directive.group(2) or "").strip()) if directive else ()
            for name in kernels if words[:1] != ("include",) and words != ("pragma", "naiveopt") \
                    else ():
                found = re.search(rf"\b{re.escape(name)}\b", t.text)
                if found:
                    sites.append(located(name, t.start + found.start(), t.start + found.end(),
                                         problem=f"'{name}' is named in a preprocessor line "
                                         "(a launch in a macro is not rewritten)"))
            i += 1
            continue
        if t.kind != "ident" or t.text not in kernels:
            i += 1
            continue
        name = t.text
        before = toks[i - 1].text if i else ""
        if before in (".", "->") or (before == "::" and i > 1 and toks[i - 2].kind == "ident"):
            i += 1                      # a member or a namespace's name: not the file's kernel
            continue
        if before == "::":
            sites.append(located(name, t.start, t.end, problem=f"'::{name}' is not rewritten "
                                 "(write the launch unqualified)"))
            i += 1
            continue
        if in_host is not None and not in_host(*_line_col(line_starts, t.start)):
            i += 1
            continue
        if i + 1 >= len(toks) or toks[i + 1].text != "<<<":
            sites.append(located(name, t.start, t.end, problem=(
                f"'{name}' is used other than in a launch ({name}<<<...>>>(...)): a "
                "function pointer, cudaLaunchKernel or an attribute query keeps the naive "
                "geometry")))
            i += 1
            continue
        site, i = _launch(text, toks, i, kernels[name], located)
        sites.append(site)
    return sites


def _line_col(line_starts: list[int], offset: int) -> tuple[int, int]:
    line = bisect_right(line_starts, offset)
    return line, offset - line_starts[line - 1] + 1


def _launch(text: str, toks: list[Token], i: int, params: int, located
            ) -> tuple[LaunchSite, int]:
    """The launch whose kernel name is ``toks[i]`` (followed by ``<<<``), and the index of
    the token after it."""
    name = toks[i].text
    close = _closing(toks, i + 2, ">>>")
    paren = close + 1 if close is not None else None
    end = _closing(toks, paren + 1, ")") if paren is not None and paren < len(toks) and \
        toks[paren].text == "(" else None
    if close is None or end is None:
        return located(name, toks[i].start, toks[i].end, problem=f"the launch of '{name}' "
                       "has no argument list naiveopt can read"), i + 1
    config = _split(text, toks, i + 2, close)
    args = _split(text, toks, paren + 1, end)
    site = located(name, toks[i].start, toks[end].end, config=config, args=args)
    if not 2 <= len(config) <= 4:
        site.problem = (f"the launch of '{name}' has {len(config)} configuration arguments "
                        "(expected grid, block[, shared bytes[, stream]])")
    elif len(args) != params:
        site.problem = (f"the launch of '{name}' passes {len(args)} arguments to its "
                        f"{params} parameters")
    else:
        geometry = {c.strip() for c in config[:2] if re.fullmatch(r"[A-Za-z_]\w*", c.strip())}
        for n, arg in enumerate(args, start=1):
            read = set(re.findall(r"[A-Za-z_]\w*", _code_only(arg)))
            if read & geometry:
                site.problem = (f"argument {n} of the launch of '{name}' ({arg.strip()}) "
                                f"reads the launch's geometry ({', '.join(sorted(read & geometry))}), "
                                "which its launcher changes")
                break
    return site, end + 1


def _code_only(text: str) -> str:
    """``text`` without its comments and literals."""
    return " ".join(t.text for t in tokens(text) if t.kind not in ("comment", "literal"))


# ------------------------------------------------------------------ rewriting
def rewrite_launches(text: str, launchers: dict[str, int]) -> tuple[str, int]:
    """``text`` with every launch ``K<<<grid, block[, shared[, stream]]>>>(args)`` of a kernel
    in ``launchers`` (name -> parameter count) replaced by ``K_launch_from(grid, block, args[,
    stream])`` (launcher.cuda_launcher), the grid, block, arguments and stream as written,
    and the number of launches rewritten. Only the launch's own text changes (its trailing
    ``;`` and all else stay); the grid and block are still evaluated, and a variable that
    held them is still used."""
    sites = [s for s in find_launch_sites(text, launchers)
             if s.kernel in launchers and s.config and not s.problem]
    out, last = [], 0
    for s in sites:
        out.append(text[last:s.start])
        geometry = [c.strip() for c in s.config[:2]]
        stream = [f" {s.stream}"] if s.stream is not None else []
        own = [f" {a}" if n == 0 and not a[:1].isspace() else a for n, a in enumerate(s.args)]
        args = [geometry[0], f" {geometry[1]}"] + own + stream
        out.append(f"{s.kernel}_launch_from({','.join(args)})")
        last = s.end
    out.append(text[last:])
    return "".join(out), len(sites)


def host_launch_sites(source: str, kernels: dict[str, int], in_host: Callable[[int, int], bool],
                      preamble: str) -> list[LaunchSite]:
    """The uses of ``kernels`` (name -> parameter count) in a file's host code
    (``in_host(line, column)``), located in ``source``. A launch in the ``preamble`` (host
    code before the file's last ``#include``, which an output writes before its kernels and
    their launchers) is one naiveopt cannot redirect."""
    sites = find_launch_sites(source, kernels, in_host)
    early = {s.kernel for s in find_launch_sites(preamble, kernels) if s.config}
    for s in sites:
        if s.kernel in early and not s.problem:
            s.problem = (f"'{s.kernel}' is launched before the file's last #include, where "
                         "its launcher is not yet declared")
    return sites


# ------------------------------------------------------------------ a launch's block
def _dim3_declarators(code: str, name: str) -> list[tuple[int, int, str | None]]:
    """The declarations of the dim3 ``name`` in ``code``: (start, end, its arguments or None
    where it has none that naiveopt reads), in ``dim3 name(X, Y);``, ``dim3 name =
    dim3(X, Y);`` and lists, as the CUDA samples write them (``dim3 grid(a, b),
    threads(TILE_DIM, BLOCK_ROWS);``)."""
    out = []
    for m in re.finditer(r"\bdim3\s+([^;{}]*);", code):
        text, at, depth, start = m.group(1), m.start(1), 0, 0
        parts = []
        for i, ch in enumerate(text + ","):
            if ch == "(":
                depth += 1
            elif ch == ")":
                depth -= 1
            elif ch == "," and depth == 0:
                parts.append((start, i))
                start = i + 1
        for a, b in parts:
            part = text[a:b]
            d = re.fullmatch(rf"\s*{name}\s*(?:=\s*dim3\s*)?(?:\(([^()]*)\))?\s*", part)
            if d is not None:
                out.append((at + a, at + b, d.group(1)))
    return out


def launch_block(site: LaunchSite, host_code: str, fixed: dict[str, int]
                 ) -> tuple[int, int, int] | None:
    """The block of a launch as integers, or None where naiveopt cannot tell it from the
    text: ``dim3(X, Y)`` or an integer expression written in the launch, or a variable the
    host code defines once as ``dim3 NAME(X, Y)`` / ``dim3 NAME = dim3(X, Y)`` and never
    changes, its sizes integers or names the compile fixes (``fixed``)."""
    from ..verify.expr import evaluate

    if len(site.config) < 2:
        return None
    block = _code_only(site.config[1]).strip()
    if re.fullmatch(r"[A-Za-z_]\w*", block):
        code = _code_only(host_code)
        declared = _dim3_declarators(code, block)
        rest = code
        for start, end, _ in declared:
            rest = rest[:start] + " " * (end - start) + rest[end:]
        changed = re.findall(rf"\b{block}\s*(?:\.\s*[xyz]\s*)?(?:[-+*/]?=(?!=)|\+\+|--)",
                             rest)
        if len(declared) != 1 or changed or declared[0][2] is None:
            return None
        sizes = [a.strip() for a in declared[0][2].split(",")]
    else:
        m = re.fullmatch(r"dim3\s*\(([^()]*)\)", block)
        sizes = [a.strip() for a in m.group(1).split(",")] if m else [block]
    if not 1 <= len(sizes) <= 3:
        return None
    values = []
    for size in sizes + ["1"] * (3 - len(sizes)):
        try:
            value = evaluate(size, fixed)
        except (ValueError, ZeroDivisionError, TypeError):
            return None
        if not isinstance(value, int) or value <= 0:
            return None
        values.append(value)
    return values[0], values[1], values[2]
