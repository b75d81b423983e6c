"""The NVCC pass's resource cache: entries are written atomically and an unreadable entry is
a miss (a batch worker once read a half-written entry of another worker compiling the same
kernel and failed the whole file with 'internal error: JSONDecodeError')."""
from __future__ import annotations

import hashlib
import os

from naiveopt.ir import Resources
from naiveopt.passes.functional import nvcc

SOURCE = "__global__ void k(float *a) { a[threadIdx.x] = 1.0f; }\n"


def _entry(tmp_path) -> str:
    key = hashlib.sha256(f"sm_90\0{SOURCE}".encode()).hexdigest()
    return os.path.join(str(tmp_path), "naiveopt", "resources", key + ".json")


def test_truncated_entry_is_a_miss(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(nvcc.shutil, "which", lambda name: "/usr/bin/nvcc")
    monkeypatch.setattr(nvcc, "_with_nvcc",
                        lambda source, arch: (Resources(arch, 12, 0, "nvcc"), ""))
    os.makedirs(os.path.dirname(_entry(tmp_path)))
    with open(_entry(tmp_path), "w", encoding="utf-8") as fh:
        fh.write("")                                   # another worker's write in progress
    res, why = nvcc.query_resources(SOURCE, "sm_90")
    assert why == "" and res.registers == 12
    again, _ = nvcc.query_resources(SOURCE, "sm_90")   # now a complete entry
    assert again.registers == 12
    assert not [f for f in os.listdir(os.path.dirname(_entry(tmp_path))) if f.endswith(".tmp")]
