"""Emission: jinja2 templates (templates/) turn the final IR into a CUDA or OpenCL file.

The templates live at the repository's top level (templates/). An installed naiveopt (a wheel,
``pip install .``, pipx) carries them inside the package as ``naiveopt/templates`` (the wheel
build force-includes them, see pyproject.toml) and reads them as package resources; an editable
checkout has no ``naiveopt/templates`` and reads the repository's templates/ directly.
"""
from __future__ import annotations

import importlib.resources
import os
import re
import shutil
import subprocess
import sys
from functools import cache

import jinja2
from pycparser import c_ast

from . import __version__
from .ir import GModule, GProcedure
from .ir.cgen import to_c
from .ir import async_copy, atomics, cu_complex, dynamic_shared, structs
from .ir.rewrite import walk
from .ir.vector import cuda_helpers, cuda_operators, used_vectors, vector_types
from .ir.textures import host_texture_params
from .ir.globals import declaration
from .ir.typenames import typedef_lines, used_names
from .frontend.prelude import headers_for
from .frontend.prelude import includes as prelude_includes
from .launch import LaunchGeometry, data_notes, launch_changed, texture_note
from .frontend.launch_sites import rewrite_launches
from .launcher import cuda_launcher, launch_check, launcher_problem

#: The repository's templates/ (used where the package carries no templates of its own).
CHECKOUT_TEMPLATE_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                     "templates")


def template_loader() -> jinja2.BaseLoader:
    """The templates: the package's own (an installed wheel), else the checkout's templates/."""
    if importlib.resources.files("naiveopt").joinpath("templates").is_dir():
        return jinja2.PackageLoader("naiveopt", "templates")
    return jinja2.FileSystemLoader(CHECKOUT_TEMPLATE_DIR)


@cache
def _env() -> jinja2.Environment:
    return jinja2.Environment(loader=template_loader(),
                              undefined=jinja2.StrictUndefined, trim_blocks=True,
                              lstrip_blocks=True, keep_trailing_newline=True)


def render(module: GModule, target: str, arch: str, geometries: dict[str, LaunchGeometry],
           passes: dict[str, list[str]], source_name: str, sidecar: str | None,
           unverified: dict[str, str] | None = None, host: bool = False,
           launchers: bool = True, work_sizes: str | None = None) -> str:
    """The output file for ``module`` (whose trees are already in ``target``'s dialect).

    ``unverified`` maps kernels written without a check to the reason (one line each), which
    the kernel's header block states. ``host``: the file a user gets, with the input's
    #include lines and host code (CUDA; an OpenCL file says the host code is left out);
    without it, device code alone (what NVRTC and the GPU kit compile). ``launchers`` (CUDA,
    with ``host``): a ``NAME_launch`` host function after each kernel (launcher.py).
    ``work_sizes``: the name of the OpenCL output's work-size header (launcher.opencl_header),
    which the file's header names."""
    template = _env().get_template("cuda.cu.j2" if target == "cuda" else "opencl.cl.j2")
    module = structs.as_written(module, target)     # (a CUDA output's struct globals)
    rewritten = rewritten_launches(module, geometries) if launchers and host and \
        target == "cuda" else set()
    kernels = [{"name": p.name,
                "code": linkage(p, target) + with_launch_contract(
                    to_c(p.func).rstrip(), p, target, arch,
                    launch_check(p, geometries[p.name], module.macros)),
                "geometry": geometries[p.name], "contract": p.launch_block is not None,
                "passes": passes.get(p.name, []), "unverified": (unverified or {}).get(p.name),
                "textures": [texture_note(t, target) for t in host_texture_params(p)],
                "data": data_notes(module, p, target)}
               for p in module.procedures]
    text = template.render(version=__version__, source=source_name, arch=arch,
                           kernels=kernels, vector_helpers=_vector_helpers(module, target),
                           globals=[declaration(g, target) for g in module.globals
                                    if target == "cuda" or not g.host_filled],
                           helpers=_atomic_helpers(module, target) +
                           [to_c(h).rstrip() for h in module.helpers],
                           int64_atomics=atomics.needs_int64_atomics(_called(module)),
                           macros=module.macros, sidecar=sidecar, work_sizes=work_sizes,
                           checks=_multiple_checks(module, geometries),
                           fp64=_uses_double(kernels, module),
                           launchers=[cuda_launcher(p, geometries[p.name], module.macros,
                                                    p.name in rewritten)
                                      for p in module.procedures]
                           if launchers and host and target == "cuda" else [],
                           **_surroundings(module, target, host))
    code = format_code(text.rstrip() + "\n")
    if host:
        code += verbatim_block(module, target)      # as written: not laid out by clang-format
    if host and target == "cuda" and module.host_code:
        # verbatim: not laid out by clang-format
        code += "\n" + _host_code(module, rewritten, source_name)
    return code


def verbatim_block(module: GModule, target: str) -> str:
    """The kernels naiveopt could not read, as the input writes them (frontend/verbatim.py),
    for an output in the input's dialect ('' otherwise: the result's warning says they are
    left out)."""
    if not module.verbatim or target != module.dialect:
        return ""
    return (f"\n// Kernels of {os.path.basename(module.path)} naiveopt could not read (and "
            "the functions only\n// they call), as written: neither optimized nor verified "
            "(the warnings say why).\n" +
            "\n\n".join(module.verbatim) + "\n")


def rewritten_launches(module: GModule, geometries: dict[str, LaunchGeometry]) -> set[str]:
    """The kernels whose launches in the host code call their launchers
    (api._plan_host_launches decided which may; only those whose launch changed do)."""
    return {p.name for p in module.procedures
            if p.host_launched and not p.keep_launch and launch_changed(p)
            and launcher_problem(p, geometries[p.name], module.macros) is None}


def _host_code(module: GModule, rewritten: set[str], source_name: str) -> str:
    """The input's host code for a CUDA output: as written, but for the launches of the
    ``rewritten`` kernels, which call their launchers now, and a comment before it that says
    what changed."""
    text, count = rewrite_launches(module.host_code, {
        p.name: dynamic_shared.cuda_arguments(p) for p in module.procedures
        if p.name in rewritten})
    if count:
        names = ", ".join(f"{k}_launch_from" for k in sorted(rewritten))
        head = (f"// Host code of {source_name}, as written but for its {count} launch(es) "
                f"of\n// optimized kernels, which call {names} (above).")
    else:
        head = (f"// Host code of {source_name}, passed through unchanged (the launch lines "
                "above give\n// the geometry each kernel needs).")
    return f"{head}\n{text.rstrip()}\n"


def _surroundings(module: GModule, target: str, host: bool) -> dict:
    """What the kernels stand among: #include lines (CUDA: the input's preamble, with
    ``host``, and the headers of the prelude names the kernels use), the file's typedefs the
    kernels still spell types through, and (OpenCL) a note that the host code is left out."""
    includes = []
    if target == "cuda":
        includes = module.preamble.rstrip("\n").split("\n") if host and module.preamble else []
        have = {name for _, _, name in prelude_includes(module.preamble)} if host else set()
        includes += [f"#include <{h}>" for h in headers_for(used_names(module)) if h not in have]
    host_note = ""
    if module.host_code and host and target != "cuda":
        host_note = (f"host code of {os.path.basename(module.path)} left out: an OpenCL C file "
                     "holds device code only")
    return {"includes": includes,
            "typedefs": typedef_lines(module, target) + structs.definitions(module, target),
            "host_note": host_note}


def with_launch_contract(code: str, proc: GProcedure, target: str, arch: str,
                         check: str = "") -> str:
    """``code`` (the kernel's definition) with its launch contract, where a transformation
    fixed the kernel's block (``proc.launch_block``: its shared tiles, merged outputs and
    thread roles assume exactly that block):

    * CUDA: ``__launch_bounds__(threads, blocks)``: a launch with more threads per block fails
      (cudaErrorInvalidValue / too many resources requested) instead of computing wrong
      numbers. ``blocks`` is the number of blocks per SM that the registers the NVCC pass
      measured (compiled without bounds) let reside: bounds alone let nvcc spend more
      registers on a block it knows is small (gesummv: 48 -> 78 for a 128-thread block), which
      would lower the occupancy the variant was chosen for; with ``blocks`` nvcc keeps to the
      measured register class, so the output is the code that was measured;
    * OpenCL: ``__attribute__((reqd_work_group_size(X, Y, Z)))``: any other local size is
      refused by clEnqueueNDRangeKernel (CL_INVALID_WORK_GROUP_SIZE), and AMD's compiler
      sizes the kernel for it (without it clang's amdgcn target assumes a flat work-group of
      at most 256, and a 512-work-item launch does not start at all).

    * CUDA, ``check`` (launcher.launch_check): a first statement that traps a launch with
      another block or grid than the output's, which bounds alone let through (fewer
      threads, or the naive grid): the program sees cudaErrorLaunchFailure, not wrong
      numbers.

    A kernel whose block is free (no pass fixed it) keeps the user's launch and gets none;
    a CUDA one whose launch did not change keeps its own ``__launch_bounds__``, which the
    user's launch was written for (the register budget nvcc gives it)."""
    if proc.launch_block is None:
        if target == "cuda" and proc.launch_bounds and not launch_changed(proc):
            return re.sub(r"^(\s*__global__\s+void\s+)",
                          lambda m: f"{m.group(1)}__launch_bounds__({proc.launch_bounds}) ",
                          code, count=1)
        if target == "opencl" and proc.work_group_size:
            # the block is the naive one, which the input's attribute fixed
            return re.sub(r"^(\s*__kernel\s+)", lambda m: f"{m.group(1)}__attribute__(("
                          f"reqd_work_group_size({proc.work_group_size}))) ", code, count=1)
        return code
    block = tuple(proc.launch_block) + (1,) * (3 - len(proc.launch_block))
    if target == "cuda":
        threads = block[0] * block[1] * block[2]
        bounds = f"{threads}"
        blocks = _resident_blocks(proc, arch, threads)
        if blocks:
            bounds += f", {blocks}"
        contracted = re.sub(r"^(\s*__global__\s+void\s+)", rf"\1__launch_bounds__({bounds}) ",
                            code, count=1)
        if check:
            contracted = re.sub(r"\{", lambda _: "{\n" + check, contracted, count=1)
    else:
        contracted = re.sub(r"^(\s*__kernel\s+)", r"\1__attribute__((reqd_work_group_size("
                            rf"{block[0]}, {block[1]}, {block[2]}))) ", code, count=1)
    if contracted == code:
        raise AssertionError(f"kernel {proc.name}: no kernel head to put its launch contract on")
    return contracted


def _resident_blocks(proc: GProcedure, arch: str, threads: int) -> int | None:
    """Blocks of ``threads`` per SM that the kernel's measured registers allow (None where
    nothing was measured for an NVIDIA target)."""
    from .targets import find_target, occupancy

    target = find_target(arch)
    res = proc.resources
    if target is None or target.vendor != "nvidia" or res is None or not res.registers:
        return None
    fraction, _ = occupancy(target, threads, res.registers, 0)
    warps = -(-threads // target.warp_size)
    blocks = max(1, round(fraction * target.warps_per_sm / warps))
    # ptxas spreads the blocks' warps over the register-file partitions and budgets each
    # partition's quarter of the registers: 25 blocks of 2 warps put 13 warps on one, which
    # leaves 32 registers a thread where the calculator's 25 blocks assumed 40 (conv's
    # register-blocked body then spills); keep the blocks whose warps fit per partition
    parts = target.register_partitions
    unit = target.register_alloc_unit
    per_warp = -(-res.registers * target.warp_size // unit) * unit
    fit = target.registers_per_sm // parts // per_warp
    while blocks > 1 and -(-blocks * warps // parts) > fit:
        blocks -= 1
    return blocks


def _uses_double(kernels: list[dict], module: GModule) -> bool:
    """Whether the code uses double: OpenCL C before 2.0 (1.1 devices) needs cl_khr_fp64
    enabled for it (PoCL's OpenCL C 1.2 accepts double without the pragma; the guard keeps the
    file building, with a clear error at the first double, on devices without fp64)."""
    texts = [k["code"] for k in kernels] + [to_c(h) for h in module.helpers] + \
        structs.definitions(module, "opencl")
    # a literal without a suffix is a double too (CUDA computes ``1.0 / (1.0 + exp(-z))`` in
    # double; OpenCL without the extension would make it single precision); one that is only
    # the value a variable is set to (``float s = 0.0;``) is converted as it is either way
    return any(re.search(r"\bdouble\b", t) or _DOUBLE_LITERAL.search(
        _SET_TO_LITERAL.sub("=;", _COMMENTS.sub(" ", t))) for t in texts)


_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_LITERAL = r"(?<![\w.])(?:\d+\.\d*|\.\d+|\d+(?=[eE]))(?:[eE][+-]?\d+)?(?![\w.])"
_DOUBLE_LITERAL = re.compile(_LITERAL)
_SET_TO_LITERAL = re.compile(r"(?<![=!<>+\-*/%&|^])=\s*-?" + _LITERAL + r"\s*;")


def _multiple_checks(module: GModule, geometries: dict[str, LaunchGeometry]
                     ) -> list[tuple[str, str]]:
    """(#if condition, #error message) for every thread-space extent an output needs to be a
    multiple of (LaunchGeometry.multiple) that is written with the file's macros alone: a
    build that overrides such a macro with a value the launch would overrun fails to compile
    instead of writing past the arrays."""
    checks = []
    for p in module.procedures:
        geo = geometries.get(p.name)
        if geo is None or not geo.multiple:
            continue
        for expr, multiple in zip(geo.thread_space, geo.multiple):
            names = set(re.findall(r"[A-Za-z_]\w*", expr))
            if multiple > 1 and names and names <= set(module.macros):
                checks.append((f"({expr}) % {multiple} != 0",
                               f"{p.name} (naiveopt output, no bounds guard) needs {expr} to "
                               f"be a multiple of {multiple}"))
    return checks


def _called(module: GModule) -> set[str]:
    """The functions the module's kernels and helpers call."""
    trees = [p.func for p in module.procedures] + list(module.helpers)
    return {n.name.name for t in trees for n, _ in walk(t)
            if isinstance(n, c_ast.FuncCall) and isinstance(n.name, c_ast.ID)}


def _atomic_helpers(module: GModule, target: str) -> list[str]:
    """The OpenCL compare-and-swap helpers the kernels call (ir/atomics.py), and the
    cuComplex.h functions they call (ir/cu_complex.py): CUDA's own, defined for OpenCL."""
    if target != "opencl":
        return []
    return atomics.opencl_helpers(_called(module)) + \
        cu_complex.opencl_definitions(_called(module))


def _vector_helpers(module: GModule, target: str) -> list[str]:
    """The CUDA vector-access helpers the kernels call (OpenCL has vloadN/vstoreN)."""
    if target != "cuda":
        return []
    trees = [p.func for p in module.procedures]
    return _operators(module, trees) + cuda_helpers(used_vectors(trees)) + \
        async_copy.cuda_helpers(trees)


def _operators(module: GModule, trees: list) -> list[str]:
    """The CUDA operators on vector types an OpenCL kernel's arithmetic needs (ir/vector.py),
    or a CUDA kernel's written with helper_math.h (defined where the header is not included:
    a resource query, a device-only output)."""
    if module.dialect != "opencl" and not module.helper_math:
        return []
    return cuda_operators(vector_types(trees + list(module.helpers)), _called(module))


#: clang-format style of emitted code: LLVM layout, 4-space indents, braces on every body,
#: the input's #include lines in their order;
#: the header's ``unverified:`` line is never split (a CommentPragmas comment), so that it
#: stays one line that grep finds whole.
CLANG_FORMAT_STYLE = ("{BasedOnStyle: LLVM, IndentWidth: 4, ColumnLimit: 100, "
                      "InsertBraces: true, AllowShortFunctionsOnASingleLine: None, "
                      "SortIncludes: Never, "
                      "MaxEmptyLinesToKeep: 1, CommentPragmas: '^ *unverified: '}")


@cache
def _clang_format() -> str | None:
    local = os.path.join(os.path.dirname(sys.executable), "clang-format")
    return local if os.path.exists(local) else shutil.which("clang-format")


def format_code(text: str) -> str:
    """Lay out emitted code with clang-format (pycparser's printer only gets it valid).

    Without clang-format the text is returned as printed, which is equally correct."""
    exe = _clang_format()
    if exe is None:
        return text
    done = subprocess.run([exe, f"--style={CLANG_FORMAT_STYLE}", "--assume-filename=k.cpp"],
                          input=text, capture_output=True, text=True, timeout=60)
    return done.stdout if done.returncode == 0 and done.stdout.strip() else text


def linkage(proc: GProcedure, target: str) -> str:
    """``extern "C" `` before a CUDA kernel the input declared with C linkage ('' otherwise:
    OpenCL C has no other)."""
    return 'extern "C" ' if target == "cuda" and proc.extern_c else ""


def render_cuda_kernel(module: GModule, proc: GProcedure) -> str:
    """A minimal CUDA file with one (postprocessed) kernel, for resource queries."""
    return render_cuda_kernels(module, [proc])


def render_cuda_kernels(module: GModule, procs: list[GProcedure]) -> str:
    """A minimal CUDA file with (postprocessed) kernels of ``module`` after its shared
    declarations, for resource queries (one file for many variants: nvcc.measure_many)."""
    parts = [f"#include <{h}>" for h in headers_for(used_names(module))]
    parts += [f"#ifndef {k}\n#define {k} {v}\n#endif" for k, v in module.macros.items()]
    # (struct parameters are still their members here: ir/structs.py)
    parts += typedef_lines(module, "cuda")
    parts += _operators(module, [p.func for p in procs])
    parts += cuda_helpers(used_vectors([p.func for p in procs]))
    parts += async_copy.cuda_helpers([p.func for p in procs])
    parts += [declaration(g, "cuda") for g in module.globals]
    parts += [to_c(h) for h in module.helpers]
    parts += [to_c(p.func) for p in procs]
    return "\n".join(parts) + "\n"
