"""The HTML report of a batch (``naiveopt ... --report report.html``).

One self-contained page (inline CSS, plots as inline SVG, no scripts, nothing fetched), so it
can be attached to a CI run or mailed: the summary table, a plot of global sectors naive vs
optimized where kernels were profiled or measured, a plot of GPU speedups where GPU results
were given, and per file its errors, each kernel's verification and remarks, and a unified
diff of the naive input against the output. The page is rendered by
templates/report.html.j2 with autoescaping on.
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING

import jinja2

from .. import __version__
from ..emit import template_loader
from ..summary import estimate_text, kernel_rows, sectors_text, speedup_text
from ..targets import get_target
from .plot import estimate_svg, sectors_svg, speedup_svg

from ..verify.infer import facts_line

if TYPE_CHECKING:
    from ..batch import Outcome


@dataclass
class KernelView:
    name: str
    verification: dict
    remarks: list[dict]
    facts: str = ""           # what verification ran with, and where each fact came from


@dataclass
class FileView:
    """One input file as the report shows it."""

    anchor: str
    input: str
    output: str | None
    error: str | None
    kernels: list[KernelView] = field(default_factory=list)
    diff: list[tuple[str, str]] = field(default_factory=list)     # (css class, line)


@cache
def _env() -> jinja2.Environment:
    return jinja2.Environment(loader=template_loader(),
                              autoescape=True, undefined=jinja2.StrictUndefined,
                              trim_blocks=True, lstrip_blocks=True)


def diff_lines(before: str, after: str, before_name: str, after_name: str
               ) -> list[tuple[str, str]]:
    """A unified diff of the input against the output, each line with its CSS class."""
    kinds = {"+": "add", "-": "del", "@": "hunk", " ": "ctx"}
    lines = difflib.unified_diff(before.splitlines(), after.splitlines(), before_name,
                                 after_name, lineterm="")
    out = []
    for line in lines:
        kind = "head" if line.startswith(("+++", "---")) else kinds.get(line[:1], "ctx")
        out.append((kind, line))
    return out


def _file_view(number: int, outcome: Outcome) -> FileView:
    view = FileView(f"file-{number}", outcome.path, outcome.output, outcome.error)
    if outcome.result is None:
        return view
    for k in outcome.result["kernels"]:
        remarks = [r for r in outcome.result["remarks"] if r["kernel"] == k["name"]]
        facts = k["verification"].get("facts")
        view.kernels.append(KernelView(k["name"], k["verification"], remarks,
                                       facts_line(facts) if facts else ""))
    view.diff = diff_lines(outcome.source, outcome.code, outcome.path,
                           outcome.output or "(output)")
    return view


def html_report(summary: dict, outcomes: list[Outcome], arch: str) -> str:
    """The page for a batch: ``summary`` is the ``--json`` summary (with any measurements
    attached), ``outcomes`` the batch's outcomes in the same order."""
    rows = kernel_rows(summary)
    files = [_file_view(n, o) for n, o in enumerate(outcomes, start=1)]
    anchors = {f.input: f.anchor for f in files}
    kernels = [r for r in rows if r.error is None]
    return _env().get_template("report.html.j2").render(
        version=__version__, arch=arch, rows=rows, files=files, anchors=anchors,
        verified=sum(r.verification == "passed" for r in kernels), kernels=len(kernels),
        failed=summary["failed"], profiled=any(r.sectors for r in rows),
        timed=any(r.gpu for r in rows), sectors_text=sectors_text, speedup_text=speedup_text,
        estimated=any(r.estimate for r in rows), estimate_text=estimate_text,
        estimate_svg=estimate_svg(rows),
        sectors_svg=sectors_svg(rows, get_target(arch).sector_bytes),
        speedup_svg=speedup_svg(rows))
