"""The report's plots, drawn with matplotlib as SVG to inline in the page (no image files, no
scripts). Text stays text (``svg.fonttype: none``) and ids are salted with a constant, so the
same batch gives the same page."""
from __future__ import annotations

import io
import os

from ..summary import KernelRow

BAR_HEIGHT = 0.38     # of a kernel's row; naive and optimized bars side by side
ROW_INCHES = 0.32     # figure height per kernel


def _label(row: KernelRow) -> str:
    return f"{os.path.basename(row.input)}: {row.kernel}"


def _svg(fig) -> str:
    """The figure as an <svg> element (the XML prologue and DOCTYPE dropped)."""
    import matplotlib

    buf = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "naiveopt"}):
        fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    text = buf.getvalue()
    return text[text.index("<svg"):]


def _figure(kernels: int):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(8, 1.2 + ROW_INCHES * kernels))
    return fig, fig.subplots()


def sectors_svg(rows: list[KernelRow], sector_bytes: int) -> str | None:
    """Global sectors (of the target's ``sector_bytes``) naive vs optimized per kernel (log
    scale), or None if none profiled."""
    rows = [r for r in rows if r.sectors]
    if not rows:
        return None
    fig, ax = _figure(len(rows))
    ys = range(len(rows))
    ax.barh([y - BAR_HEIGHT / 2 for y in ys], [r.sectors["naive"] for r in rows],
            BAR_HEIGHT, label="naive", color="#c0504d")
    ax.barh([y + BAR_HEIGHT / 2 for y in ys], [r.sectors["optimized"] for r in rows],
            BAR_HEIGHT, label="optimized", color="#4f81bd")
    ax.set_yticks(list(ys), [_label(r) for r in rows])
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.set_xlabel(f"global memory sectors ({sector_bytes} B), log scale")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1))
    ax.grid(axis="x", alpha=0.3)
    return _svg(fig)


def estimate_svg(rows: list[KernelRow]) -> str | None:
    """The cost model's estimated time naive vs optimized per kernel (log scale, each bar
    labelled with its bound), or None if nothing was estimated."""
    rows = [r for r in rows if r.estimate]
    if not rows:
        return None
    fig, ax = _figure(len(rows))
    ys = range(len(rows))
    for offset, which, color in ((-BAR_HEIGHT / 2, "naive", "#c0504d"),
                                 (BAR_HEIGHT / 2, "optimized", "#4f81bd")):
        times = [r.estimate[which]["seconds"] * 1e6 for r in rows]
        ax.barh([y + offset for y in ys], times, BAR_HEIGHT, label=which, color=color)
        for y, t, r in zip(ys, times, rows):
            ax.annotate(f" {r.estimate[which]['bound']}", (t, y + offset), va="center",
                        fontsize=7)
    ax.set_yticks(list(ys), [_label(r) for r in rows])
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.set_xlabel("estimated time (us), log scale")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1))
    ax.grid(axis="x", alpha=0.3)
    return _svg(fig)


def speedup_svg(rows: list[KernelRow]) -> str | None:
    """GPU speedup of the output over the naive kernel, per kernel and device, or None."""
    bars = [(f"{_label(r)} ({g['device']})", g["speedup"]) for r in rows for g in r.gpu]
    if not bars:
        return None
    fig, ax = _figure(len(bars))
    ax.barh(range(len(bars)), [s for _, s in bars], 0.6, color="#4f81bd")
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.set_yticks(range(len(bars)), [label for label, _ in bars])
    ax.invert_yaxis()
    ax.set_xlabel("speedup over the naive kernel (GPU time, x)")
    ax.grid(axis="x", alpha=0.3)
    return _svg(fig)
