"""naiveopt.verify.pocl_cpu: naming a CPU that PoCL's LLVM 14 does not know."""
import struct

import pytest

from naiveopt.verify import pocl_cpu
from naiveopt.verify.pocl_cpu import KNOWN, Build, cpu_level, patched

V4 = {"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl", "avx2", "fma", "bmi1",
      "bmi2", "movbe"}


@pytest.mark.parametrize("flags, level", [
    (V4, "x86-64-v4"),
    (V4 - {"avx512vl"}, "x86-64-v3"),       # AVX-512 without VL is not level 4
    ({"avx2", "fma", "bmi1", "bmi2", "movbe", "sse4_2"}, "x86-64-v3"),
    ({"avx2", "sse4_2"}, "x86-64"),         # AVX2 without FMA/BMI is not level 3
    (set(), "x86-64"),
])
def test_cpu_level_is_the_highest_the_flags_cover(flags, level):
    assert cpu_level(flags) == level


def _decode(code: bytes, site: int):
    """(address the lea loads, ebx, edi) from the patched call site."""
    assert code[:3] == b"\x48\x8d\x2d" and code[7] == 0xBB and code[12] == 0xBF
    assert code[17:] == b"\x0f\x1f\x00"
    (disp,) = struct.unpack("<i", code[3:7])
    return site + 7 + disp, struct.unpack("<I", code[8:12])[0], struct.unpack("<I", code[13:17])[0]


def test_patch_points_at_the_name_and_changes_nothing_else():
    original = KNOWN[0].original
    data = b"\x90" * 64 + original + b"\xcc" * 40 + b"\0x86-64\0" + b"\0x86-64-v4\0" + b"\x11" * 8
    build = Build("", 64, original)
    new = patched(data, build, "x86-64-v4")
    assert len(new) == len(data)
    changed = [i for i, (a, b) in enumerate(zip(data, new)) if a != b]
    assert changed and min(changed) >= 64 and max(changed) < 64 + len(original)
    target, length, size = _decode(new[64:64 + len(original)], 64)
    assert new[target:target + length + 1] == b"x86-64-v4\0"
    assert (length, size) == (9, 10)


def test_patch_refuses_unexpected_code_or_a_missing_name():
    original = KNOWN[0].original
    build = Build("", 8, original)
    with pytest.raises(ValueError, match="expected instructions"):
        patched(b"\0" * 8 + b"\x90" * 20 + b"\0x86-64\0", build, "x86-64")
    with pytest.raises(ValueError, match="not in the library"):
        patched(b"\0" * 8 + original + b"\0x86-64\0", build, "x86-64-v4")


def test_fix_refuses_a_build_it_does_not_know(tmp_path):
    lib = tmp_path / "libpocl.so"
    lib.write_bytes(b"not pocl")
    with pytest.raises(ValueError, match="does not know"):
        pocl_cpu.fix(lib, "x86-64")
    assert lib.read_bytes() == b"not pocl"


def test_installed_pocl_is_the_known_build_patched_or_not():
    """The installed library holds, at the known site, either LLVM's call or a patch naming
    an x86-64 level (what setup.sh leaves), and a kernel builds on this machine."""
    path = pocl_cpu.library()
    if path is None:
        pytest.skip("pocl-binary-distribution is not installed")
    data = path.read_bytes()
    build = KNOWN[0]
    site = data[build.site:build.site + len(build.original)]
    if site != build.original and site[:3] != b"\x48\x8d\x2d":
        pytest.skip(f"{path.name} is a PoCL build pocl_cpu does not know (nothing to check)")
    if site != build.original:
        target, length, _ = _decode(site, build.site)
        assert data[target:target + length].decode() in {"x86-64", "x86-64-v3", "x86-64-v4"}
    assert pocl_cpu.trial_build_error().strip() == ""
