"""Text and JSON output of ``naiveopt profile``."""
from __future__ import annotations

from . import KernelProfile


def _table(rows: list[tuple]) -> str:
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def text(p: KernelProfile) -> str:
    """A per-site table and the totals of one kernel profile."""
    head = (f"{p.kernel} ({p.variant}{': ' + ', '.join(p.passes) if p.passes else ''}) at "
            + ", ".join(f"{k}={v}" for k, v in p.sizes.items())
            + f"; block {'x'.join(map(str, p.block))}, {p.blocks} blocks, "
            f"{p.sampled_blocks} sampled")
    rows = [("site", "access", "space", "kind", "requests", "sectors/req", "sectors",
             "bank conflicts")]
    for s in p.sites:
        j = s.to_json()
        kind = "load+store" if j["load"] and j["store"] else ("store" if j["store"] else "load")
        rows.append((j["site"], j["access"][:40], j["space"], kind, j["requests"],
                     j["sectors_per_request"], j["sectors"] if j["space"] == "global" else "-",
                     j["bank_conflicts"] if j["space"] == "shared" else "-"))
    t = p.totals.to_json()
    occ = "unknown" if t["occupancy"] is None else (
        f"{t['occupancy']:.0%} (limited by {t.get('occupancy_limited_by')})")
    summary = (f"global sectors: {t['global_sectors']} (loads {t['global_load_sectors']}, "
               f"stores {t['global_store_sectors']}); compulsory: {t['compulsory_sectors']}"
               f" ({t['global_sectors'] / max(1, t['compulsory_sectors']):.2f}x); shared bank "
               f"conflicts: {t['shared_bank_conflicts']}; occupancy: {occ}")
    est = t.get("estimate")
    if est:
        summary += "\n" + _estimate_line(est)
    return f"{head}\n{_table(rows)}\n{summary}\n"


def compare_text(naive: KernelProfile, optimized: KernelProfile) -> str:
    n, o = naive.totals.to_json(), optimized.totals.to_json()
    rows = [("metric", "naive", "optimized", "ratio")]
    for key in ("global_sectors", "global_load_sectors", "global_store_sectors",
                "compulsory_sectors", "shared_bank_conflicts", "occupancy"):
        a, b = n[key], o[key]
        ratio = f"{a / b:.2f}x" if isinstance(a, (int, float)) and b else "-"
        rows.append((key, a, b, ratio))
    ne, oe = n.get("estimate"), o.get("estimate")
    if ne and oe:
        rows.append(("estimated us", f"{ne['seconds'] * 1e6:.2f}", f"{oe['seconds'] * 1e6:.2f}",
                     f"{ne['seconds'] / oe['seconds']:.2f}x" if oe["seconds"] else "-"))
        rows.append(("bound", ne["bound"], oe["bound"], "-"))
    return f"{naive.kernel}: naive vs optimized ({', '.join(optimized.passes) or 'no pass fired'})\n{_table(rows)}\n"


def _estimate_line(est: dict) -> str:
    """The cost model's estimate (cost/model.py), FP32 work not counted."""
    note = f" ({est['note']})" if est.get("note") else ""
    return (f"estimate: {est['seconds'] * 1e6:.2f} us, {est['bound']}-bound{note}, "
            f"{est['dram_fraction']:.0%} of DRAM bandwidth (memory bounds only: FP32 work is "
            "not in the trace)")
