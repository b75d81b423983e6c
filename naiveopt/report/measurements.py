"""Measurements from bench/run.py's result files, attached to the kernels of a batch summary.

bench/run.py writes two kinds of file into bench/results/:

- ``profile-<arch>.json``: ``{"arch", "rows": [{"kernel", "passes", "sizes", "naive_sectors",
  "optimized_sectors", "compulsory_sectors", ...}]}``, where ``kernel`` is the file's stem, or
  ``stem:kernel`` for a file of several kernels (address traces on PoCL);
- ``<device>-<date>.json``: ``{"device", "date", "arch", "results": [{"kernel", "sizes",
  "passes", "naive_ms", "optimized_ms", "speedup", ...}]}``, GPU timings, where ``kernel`` is
  the kernel's name (with ``"file"``, the stem, where a row has it).

A row is shown for a kernel of the batch only when it names that kernel, was taken for the
batch's ``--arch``, and records the passes this run applied: otherwise its figures describe
another output, and the kernel gets a note saying why they are not shown. Sectors measured in
this run (``--profile``) take precedence over recorded ones.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field

from ..errors import NaiveoptError


@dataclass
class Measurements:
    """The rows of the result files given, with the file each came from."""

    arch: str
    sectors: list[tuple[str, str, dict]] = field(default_factory=list)   # (file, arch, row)
    gpu: list[tuple[str, dict, dict]] = field(default_factory=list)      # (file, doc, row)

    def attach(self, summary: dict) -> None:
        """Add ``sectors`` (with the cost model's ``estimate`` where the results have it),
        ``gpu`` and ``measurement_notes`` to the summary's kernels."""
        for entry in summary["files"]:
            if "error" in entry:
                continue
            stem = os.path.splitext(os.path.basename(entry["input"]))[0]
            single = len(entry["kernels"]) == 1
            for kernel in entry["kernels"]:
                self._attach_kernel(kernel, stem, single)

    def _attach_kernel(self, kernel: dict, stem: str, single: bool) -> None:
        notes = []
        names = {f"{stem}:{kernel['name']}"} | ({stem} if single else set())
        for path, arch, row in self.sectors:
            if row["kernel"] in names and self._applies(row, arch, kernel, path, notes) \
                    and "sectors" not in kernel:
                kernel["sectors"] = {"naive": row["naive_sectors"],
                                     "optimized": row["optimized_sectors"],
                                     "compulsory": row.get("compulsory_sectors"),
                                     "sizes": row.get("sizes", {}), "from": path}
                if row.get("naive_estimate") and row.get("estimate"):
                    kernel["estimate"] = {"naive": row["naive_estimate"],
                                          "optimized": row["estimate"],
                                          "sizes": row.get("sizes", {}), "arch": arch,
                                          "from": path}
        for path, doc, row in self.gpu:
            if row["kernel"] == kernel["name"] and row.get("file", stem) == stem \
                    and self._applies(row, doc.get("arch"), kernel, path, notes):
                kernel.setdefault("gpu", []).append({
                    "device": row.get("device", doc.get("device", "?")),
                    "date": doc.get("date"), "sizes": row.get("sizes", {}),
                    "naive_ms": row["naive_ms"], "optimized_ms": row["optimized_ms"],
                    "speedup": row["speedup"], "from": path})
        if notes:
            kernel["measurement_notes"] = notes

    def _applies(self, row: dict, arch: str | None, kernel: dict, path: str,
                 notes: list[str]) -> bool:
        if arch is not None and arch != self.arch:
            notes.append(f"{path}: taken for {arch}, not {self.arch}: not shown")
            return False
        if list(row.get("passes", [])) != list(kernel["passes"]):
            notes.append(f"{path}: taken with passes [{', '.join(row.get('passes', []))}], "
                         f"this run applied [{', '.join(kernel['passes'])}]: not shown")
            return False
        return True


def load_measurements(paths: list[str], arch: str) -> Measurements:
    """Read bench/run.py result files; a file of neither kind is an error naming it."""
    found = Measurements(arch)
    for path in paths:
        try:
            with open(path, encoding="utf-8") as fh:
                doc = json.load(fh)
        except OSError as exc:
            raise NaiveoptError(f"cannot read: {exc.strerror}", path) from exc
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise NaiveoptError(f"not a JSON file: {exc}", path) from exc
        try:
            if isinstance(doc, dict) and isinstance(doc.get("rows"), list):
                for row in doc["rows"]:
                    _require(row, ("kernel", "naive_sectors", "optimized_sectors"))
                    found.sectors.append((path, doc.get("arch"), row))
            elif isinstance(doc, dict) and isinstance(doc.get("results"), list):
                for row in doc["results"]:
                    _require(row, ("kernel", "naive_ms", "optimized_ms", "speedup"))
                    found.gpu.append((path, doc, row))
            else:
                raise NaiveoptError("expected a bench/run.py result file (with 'rows' of "
                                    "sectors or 'results' of GPU timings)")
        except NaiveoptError as exc:
            raise NaiveoptError(exc.message, path) from exc
    return found


def _require(row: object, keys: tuple[str, ...]) -> None:
    """A row names its kernel and has the numbers the table shows (a file edited by hand
    must not give a traceback later)."""
    missing = [k for k in keys if not isinstance(row, dict) or k not in row]
    if missing:
        raise NaiveoptError(f"a row lacks {', '.join(missing)}")
    wrong = [k for k in keys[1:] if isinstance(row[k], bool)
             or not isinstance(row[k], (int, float))]
    if not isinstance(row["kernel"], str) or wrong:
        raise NaiveoptError(f"row '{row['kernel']}': expected a name and numbers, got "
                            + ", ".join(f"{k}={row[k]!r}" for k in ["kernel", *wrong]))
    if not isinstance(row.get("passes", []), list):
        raise NaiveoptError(f"row '{row['kernel']}': 'passes' is not a list")
