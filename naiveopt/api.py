"""The Python API: ``naiveopt.optimize(source, target=..., arch=...)``.

It parses a kernel file, runs the pass pipeline (passes/pipeline.py), renders the output through
the templates, and verifies every kernel against its naive input on the OpenCL device. The CLI
is a thin layer over this function.
"""
from __future__ import annotations

import copy
import os
from dataclasses import dataclass, field, replace

from .emit import render, verbatim_block
from .errors import NaiveoptError
from .frontend import SourceUnit, parse_unit
from .ir import GModule, Resources, structs
from .ir.structs import input_layout
from .ir.textures import host_texture_params, param_layout
from .launcher import launcher_problem, opencl_header
from .launch import (LaunchGeometry, apply_extents, constant_symbols, data_json,
                     default_block, geometry, launch_changed, texture_json)
from .passes.manager import INTERNAL_ERRORS_ENV, InternalError, PassContext, Remark, run_passes
from .passes.options import PipelineOptions, parse_pipeline
from .passes.pipeline import (back_passes, front_passes, launch_passes, optimization_passes,
                              settling_passes, unoptimized_passes)
from .verify.expr import evaluate
from .verify.check import Program, Verification, verify_kernel
from .verify.infer import (apply_inferred_threads, facts, file_spec, infer_kernels,
                           small_sizes)
from .verify.policy import refusal, unchanged_kernel
from .verify.spec import (FileSpec, size_sets, apply_launch_facts, load_metadata, metadata_path,
                          spec_from_pragmas, with_file_data, with_kernel_facts)

TARGETS = ("cuda", "opencl")


@dataclass
class KernelResult:
    """What naiveopt did to one kernel."""

    name: str
    passes: list[str]
    geometry: LaunchGeometry
    resources: Resources | None
    verification: Verification
    textures: list[dict] = field(default_factory=list)   # launch.texture_json per parameter
    data: dict = field(default_factory=dict)             # launch.data_json: file-scope data

    def launch_json(self) -> dict:
        """The kernel's entry in the launch sidecar: geometry, and textures and file-scope
        data when it has any."""
        out = self.geometry.to_json()
        if self.textures:
            out["textures"] = self.textures
        out.update(self.data)
        return out

    @property
    def verified(self) -> bool:
        """True when the kernel was checked against its naive input and passed."""
        return self.verification.status == "passed"

    @property
    def unverified(self) -> str | None:
        """Why the kernel is written without a check (verification could not run: no sizes,
        verify=False, an unknown shape...), or None when it was checked (passed or failed).
        Such an output may differ in meaning from its input without anything saying so but
        this reason, which the output's header and the CLI's warning repeat."""
        if self.verification.status in ("passed", "failed"):
            return None
        return one_line(self.verification.detail or f"verification {self.verification.status}")

    def to_json(self) -> dict:
        return {"name": self.name, "passes": self.passes, "launch": self.launch_json(),
                "resources": self.resources.__dict__ if self.resources else None,
                "verified": self.verified, "unverified": self.unverified,
                "verification": self.verification.to_json()}


@dataclass
class OptimizeResult:
    """The output code, its launch geometry per kernel, the remarks and verification."""

    code: str
    input: str
    target: str
    arch: str
    kernels: list[KernelResult]
    remarks: list[Remark] = field(default_factory=list)
    # CUDA output: the file-scope data the host fills with cudaMemcpyToSymbol
    constant_symbols: list[dict] = field(default_factory=list)
    # passes that raised (bugs): their kernels are written as the passes before left them
    internal_errors: list[InternalError] = field(default_factory=list)
    # OpenCL output with launchers: the C header of work sizes (launcher.opencl_header) that
    # the CLI writes beside the output as OUT.h
    work_sizes_header: str = ""
    # kernels of the input naiveopt did not read (declared in a namespace): written as they
    # are, neither optimized nor verified; (why, line, column) each
    left_as_written: list[tuple[str, int, int]] = field(default_factory=list)
    # ... where the output does not carry them: another dialect, or device code only
    left_out: bool = False

    @property
    def verified(self) -> bool:
        """True when every kernel was checked and passed (a kernel left as written was not)."""
        return all(k.verification.status == "passed" for k in self.kernels) and \
            not self.left_as_written

    @property
    def failed(self) -> bool:
        return any(k.verification.status == "failed" for k in self.kernels)

    @property
    def unverified(self) -> dict[str, str]:
        """Kernel name -> why it is written unverified (KernelResult.unverified), in order."""
        return {k.name: k.unverified for k in self.kernels if k.unverified is not None}

    def unverified_messages(self) -> list[str]:
        """One ``FILE: KERNEL: warning: written unverified: REASON`` line per such kernel."""
        return [f"{self.input}: {name}: warning: written unverified: {reason}"
                for name, reason in self.unverified.items()]

    def left_as_written_messages(self) -> list[str]:
        """One ``FILE:LINE:COL: warning: ...; written as it is`` line per kernel of the input
        that naiveopt did not read."""
        fate = ("left out of the output, which holds only the kernels naiveopt read"
                if self.left_out else "written as it is, neither optimized nor verified")
        return [f"{self.input}:{line}:{column}: warning: {why}; {fate}"
                for why, line, column in self.left_as_written]

    def internal_error_messages(self) -> list[str]:
        """One ``FILE: KERNEL: warning: pass P failed internally (please report): ...`` line
        per pass that raised on a kernel (passes/manager.py: the kernel was kept as it was)."""
        return [e.warning(self.input) for e in self.internal_errors]

    def launch_json(self) -> dict:
        out = {"input": self.input, "target": self.target, "arch": self.arch,
               "kernels": {k.name: k.launch_json() for k in self.kernels}}
        if self.constant_symbols:
            out["constant_symbols"] = self.constant_symbols
        return out

    def to_json(self) -> dict:
        return {"input": self.input, "target": self.target, "arch": self.arch,
                "verified": self.verified, "kernels": [k.to_json() for k in self.kernels],
                "remarks": [r.to_json() for r in self.remarks],
                "internal_errors": [e.to_json() for e in self.internal_errors],
                "left_as_written": [{"why": why, "line": line, "column": column}
                                    for why, line, column in self.left_as_written]}


def pipeline_options(options: PipelineOptions | dict | None = None, *,
                     passes: list[str] | None = None, pipeline: str | None = None
                     ) -> PipelineOptions:
    """The API's ways of saying how the passes run, as one PipelineOptions: ``options`` (a
    PipelineOptions, or the dict of its fields that callers have always passed), and the pass
    list to run as ``passes=[...]`` or MLIR-style ``pipeline="coalesce,thread-merge"``."""
    if not isinstance(options, PipelineOptions):
        options = PipelineOptions.from_mapping(options)
    if passes is not None and pipeline is not None:
        raise NaiveoptError("give the passes to run as passes=[...] or pipeline=\"...\", "
                            "not both")
    if pipeline is not None:
        passes = parse_pipeline(pipeline)
    return options if passes is None else replace(options, passes=passes)


def compile_module(unit: SourceUnit, target: str | None, arch: str, opt: bool,
                   metadata: str | None = None, dump_ir: str | None = None,
                   options: PipelineOptions | dict | None = None,
                   launcher: bool = True) -> Compiled:
    """Run the pipeline on a copy of the parsed file and write the kernels back out in
    ``target``'s dialect (``opt=False``: the functional passes alone). ``launcher``: the
    output carries launchers, which the host code's launches will call (_plan_host_launches)."""
    target = target or unit.dialect
    if target not in TARGETS:
        raise NaiveoptError(f"unknown target '{target}' (expected cuda or opencl)")
    module = unit.fresh_module()
    meta = metadata or metadata_path(unit.path)
    metadata_spec = load_metadata(meta) if os.path.exists(meta) else None
    apply_launch_facts(module, metadata_spec)
    apply_extents(module, unit.fixed, unit.overridable)
    options = pipeline_options(options)
    optimizations = optimization_passes(options) if opt else unoptimized_passes()
    ctx = PassContext(module, target, arch, options)
    ctx.sizes, ctx.sizes_from = estimate_sizes(metadata_spec, unit)
    run_passes(front_passes(options), ctx, dump_ir)
    # what the naive kernels imply for verification, read before the passes change them
    inference = None if metadata_spec else infer_kernels(module, spec_from_pragmas(module),
                                                         unit.fixed)
    if inference is not None:
        # a tap radius or mask width the sizes leave open: small, as a problem of interest's
        small = {n: v for n, v in small_sizes(inference).items() if n not in ctx.sizes}
        if small:
            ctx.sizes.update(small)
            ctx.sizes_from = " and ".join(filter(None, (ctx.sizes_from, "tap sizes small")))
        for proc, how in apply_inferred_threads(module, inference):
            gx, gy = proc.pragma.global_dim
            ctx.remark("analysis", "thread-space", proc, f"thread space inferred: ({gx}, {gy}) "
                       f"(no bounds guard; {how})")
        apply_extents(module, unit.fixed, unit.overridable)
    _plan_host_launches(ctx, launcher, {
        name: k.threads for name, k in (metadata_spec.kernels.items() if metadata_spec else
                                        ((n, i.spec) for n, i in inference.kernels.items()))})
    run_passes(launch_passes(options), ctx, dump_ir)
    run_passes(optimizations, ctx, dump_ir)
    run_passes(settling_passes(), ctx, dump_ir)
    _host_launch_remarks(ctx, launcher)
    analysed = copy.deepcopy(module)
    completed = list(ctx.completed)
    run_passes(back_passes(target), ctx, dump_ir)
    spec = metadata_spec or file_spec(inference, module)
    geometries = {p.name: _geometry(p, spec) for p in module.procedures}
    return Compiled(module, analysed, completed, ctx, spec, geometries, target, unit)


def estimate_sizes(spec: FileSpec | None, unit: SourceUnit) -> tuple[dict[str, int], str]:
    """The problem sizes the cost model estimates at, and where they come from: metadata's
    ``default`` set (the benchmark's sizes), with what -D and the file's macros fix on top."""
    sizes: dict[str, int] = {}
    sources = []
    if spec is not None and spec.sizes.get("default"):
        sizes.update(spec.sizes["default"])
        sources.append("metadata's default sizes")
    if unit.fixed:
        sizes.update(unit.fixed)
        sources.append("-D and the file's macros" if unit.defines else "the file's macros")
    if spec is not None and sizes:
        # a size parameter named apart from its size (gemm's 'int nk' = NK) at its value
        for kernel in spec.kernels.values():
            for arg in kernel.args:
                if arg.role == "size" and arg.value and arg.name not in sizes:
                    try:
                        sizes[arg.name] = int(evaluate(arg.value, sizes))
                    except (ValueError, ZeroDivisionError, TypeError):
                        pass
    return sizes, " and ".join(sources)


def _plan_host_launches(ctx: PassContext, launcher: bool,
                        threads: dict[str, tuple[str, ...] | None]) -> None:
    """Decide, for each kernel the file's host code launches (GModule.launch_sites), whether
    its launches will call its launcher (CUDA outputs with launchers): where one cannot
    (frontend/launch_sites.py says why, or the launcher needs a size the launch does not
    give), the kernel is kept naive (GProcedure.keep_launch) and its launches stay as
    written; either way a remark says so. ``threads``: each kernel's thread space, as the
    spec gives it, which the launcher's sizes come from."""
    module = ctx.module
    if ctx.target != "cuda" or not module.launch_sites or not launcher:
        return      # no host code in the output (OpenCL, or --no-launcher: device code only)
    for proc in module.procedures:
        sites = [s for s in module.launch_sites if s.kernel == proc.name]
        if not sites:
            continue
        proc.host_launched = True
        bad = next((s for s in sites if s.problem), None)
        if bad is not None:
            why = f"line {bad.line}: {bad.problem}"
        else:
            why = launcher_problem(proc, geometry(proc, thread_space=threads.get(proc.name)),
                                   module.macros) or ""
        if why:
            proc.keep_launch = f"kept naive, as the host code launches it ({why})"
            ctx.remark("missed", "host-launches", proc, proc.keep_launch)


def _host_launch_remarks(ctx: PassContext, launcher: bool) -> None:
    """After the passes: what becomes of the host code's launches of each kernel whose
    launches can be rewritten (emit._host_code writes what this says)."""
    for proc in ctx.module.procedures:
        if not proc.host_launched or proc.keep_launch or not launcher:
            continue
        sites = [s for s in ctx.module.launch_sites if s.kernel == proc.name]
        where = f"{len(sites)} launch(es) in the host code (line " + \
            ", ".join(str(s.line) for s in sites) + ")"
        if launch_changed(proc):
            ctx.remark("analysis", "host-launches", proc, f"{where} now call "
                       f"{proc.name}_launch_from, with the output's geometry")
        else:
            ctx.remark("analysis", "host-launches", proc, f"{where} kept as written: no "
                       "pass changed the kernel's launch")


@dataclass
class Compiled:
    """A file after the pipeline: the final module, the analysed one (before write-back),
    the verification spec, each kernel's launch geometry, and the unit it was compiled from."""

    module: GModule
    analysed: GModule
    completed: list[str]
    ctx: PassContext
    spec: FileSpec | None
    geometries: dict[str, LaunchGeometry]
    target: str
    unit: SourceUnit

    def opencl_module(self) -> GModule:
        """The kernels written as OpenCL (CUDA targets are translated for running)."""
        if self.target == "opencl":
            return self.module
        module = copy.deepcopy(self.analysed)
        ctx = PassContext(module, "opencl", self.ctx.arch, completed=list(self.completed))
        run_passes(back_passes("opencl"), ctx)
        return module


def optimize(source: str, *, filename: str = "kernel.cu", target: str | None = None,
             arch: str = "sm_90", opt: bool = True, verify: bool = True,
             defines: dict[str, str] | None = None, metadata: str | None = None,
             dump_ir: str | None = None, options: PipelineOptions | dict | None = None,
             sidecar_name: str | None = None, require_verified: bool = False,
             passes: list[str] | None = None, pipeline: str | None = None,
             launcher: bool = True) -> OptimizeResult:
    """Optimize the kernels of one file.

    ``filename`` names the source (its extension gives the dialect; metadata is looked up
    beside it); ``target`` defaults to the input's dialect. ``metadata`` overrides the metadata
    path. Raises NaiveoptError for bad input.

    A kernel that could not be verified (``verify=False``, no sizes, ...) is still returned,
    with ``KernelResult.unverified`` giving the reason, which the code's header repeats
    (``//   unverified: REASON``); ``require_verified=True`` makes that a NaiveoptError. A
    kernel that fails verification is returned with status 'failed' (``result.failed``).

    ``options`` sets how the passes run (PipelineOptions, or a dict of its fields: memory,
    vectorize, merge, disable...). ``passes=["coalesce", "thread-merge"]`` or
    ``pipeline="coalesce,thread-merge"`` runs exactly those optimization passes, in that order,
    after the functional ones (default: the whole pipeline).

    A CUDA output carries a ``NAME_launch`` host function after each kernel, which launches it
    with the geometry it needs (launcher.cuda_launcher), and the launches in the file's host
    code call it (frontend/launch_sites.py); an OpenCL output comes with a C header of work
    sizes (``result.work_sizes_header``, launcher.opencl_header). ``launcher=False`` leaves
    them out, and the host code with them: a file of device code only, as NVRTC compiles it.
    """
    defines = dict(defines or {})
    options = pipeline_options(options, passes=passes, pipeline=pipeline)
    if not opt and options.passes:
        raise NaiveoptError("opt=False runs no optimization pass, yet passes were named")
    unit = parse_unit(filename, source, defines)
    c = compile_module(unit, target, arch, opt, metadata, dump_ir, options, launcher)
    header = None
    if c.target == "opencl" and launcher and sidecar_name:
        header = sidecar_name.removesuffix(".json") + ".h"
    code = render(c.module, c.target, arch, c.geometries, c.ctx.applied,
                  os.path.basename(filename), sidecar_name, host=launcher, launchers=launcher,
                  work_sizes=header)
    verifications = _verify(c, code) if verify else {}
    reordered = _reassociated_failures(c, verifications)
    if reordered:
        # a reordered floating-point sum beyond tolerance (a long one at these sizes): the
        # file again with the order kept, as --fp-strict compiles it
        strict = compile_module(unit, target, arch, opt, metadata, dump_ir,
                                replace(options, fp_strict=True), launcher)
        strict_code = render(strict.module, strict.target, arch, strict.geometries,
                             strict.ctx.applied, os.path.basename(filename), sidecar_name,
                             host=launcher, launchers=launcher, work_sizes=header)
        checked = _verify(strict, strict_code)
        if not any(v.status == "failed" for v in checked.values()):
            for name, passes in reordered.items():
                strict.ctx.remarks.append(Remark(
                    "missed", "verify", name, f"the output of {', '.join(passes)} (a "
                    f"reordering of floating-point arithmetic) differed from the naive kernel beyond "
                    f"tolerance ({verifications[name].detail}): compiled keeping the order "
                    f"(as --fp-strict)"))
            c, code, verifications = strict, strict_code, checked
    if verify and opt and os.environ.get(INTERNAL_ERRORS_ENV) != "raise":
        fallen = _fall_back(c, verifications, lambda off: compile_module(
            unit, target, arch, opt, metadata, dump_ir,
            replace(c.ctx.options, disable=tuple(c.ctx.options.disable) + off), launcher),
            lambda trial: render(trial.module, trial.target, arch, trial.geometries,
                                 trial.ctx.applied, os.path.basename(filename), sidecar_name,
                                 host=launcher, launchers=launcher, work_sizes=header))
        if fallen is not None:
            c, code, verifications = fallen
    missing = Verification("skipped", "verification disabled (--no-verify)"
                           if not verify else "no verification data for this kernel")
    written = structs.as_written(c.module, c.target)
    kernels = [KernelResult(p.name, c.ctx.applied.get(p.name, []), c.geometries[p.name],
                            p.resources, verifications.get(p.name, missing), _textures(p, c),
                            data_json(written, w, c.target))
               for p, w in zip(c.module.procedures, written.procedures)]
    result = OptimizeResult(code, filename, c.target, arch, kernels, c.ctx.remarks,
                            constant_symbols(written) if c.target == "cuda" else [],
                            list(c.ctx.internal_errors),
                            left_as_written=list(unit.module.left_as_written),
                            left_out=not launcher or c.target != unit.module.dialect)
    if result.unverified:
        # the header says so; only comments change, so the verified text is the same program
        result.code = render(c.module, c.target, arch, c.geometries, c.ctx.applied,
                             os.path.basename(filename), sidecar_name, result.unverified,
                             host=launcher, launchers=launcher, work_sizes=header)
    if c.target == "opencl" and launcher:
        result.work_sizes_header = opencl_header(
            c.module.procedures, c.geometries, c.module.macros,
            sidecar_name.removesuffix(".json") if sidecar_name else os.path.basename(filename))
    if require_verified and (result.unverified or result.left_as_written):
        raise NaiveoptError("; ".join([f"kernel '{name}' not verified: {reason}" for name, reason
                                       in result.unverified.items()]
                                      + [why for why, _, _ in result.left_as_written])
                            + " (require_verified: no output)", filename)
    return result


def _reassociated_failures(c: Compiled, verifications: dict[str, Verification]
                           ) -> dict[str, list[str]]:
    """The kernels that failed verification after a pass that may reorder floating-point
    arithmetic applied (kernel -> those passes), where --fp-strict was not given."""
    if c.ctx.options.fp_strict:
        return {}
    reordering = {p.name for p in optimization_passes() if getattr(p, "reassociates", False)}
    out = {}
    for name, v in verifications.items():
        passes = [p for p in c.ctx.applied.get(name, []) if p in reordering]
        if v.status == "failed" and passes:
            out[name] = passes
    return out


def _fall_back(c: Compiled, verifications: dict[str, Verification], compile_without,
               render_code) -> tuple[Compiled, str, dict[str, Verification]] | None:
    """The file compiled again without the pass that miscompiled a kernel, where the output
    of a kernel failed verification (it wrote other values than the naive kernel, or crashed):
    (compiled, code, verifications), or None where no such failure or no retry verifies.

    Why: verification caught a naiveopt bug; the user still gets a verified output, optimized
    by the other passes, with a warning per culprit (an InternalError: "please report"), as
    a JIT falls back to a lower tier. The passes that applied to the failing kernels are
    switched off one at a time, the last applied first (one wrong transformation is the usual
    case), then all together; the first retry under which every kernel that failed verifies,
    and none fails anew, is taken. The test suite (NAIVEOPT_INTERNAL_ERRORS=raise) keeps the
    failure, as it lets a pass's exception propagate."""
    failing = [n for n, v in verifications.items()
               if v.status == "failed" and v.blames_output and c.ctx.applied.get(n)]
    if not failing:
        return None
    suspects = list(dict.fromkeys(p for n in failing for p in reversed(c.ctx.applied[n])))
    tries = [(p,) for p in suspects] + ([tuple(suspects)] if len(suspects) > 1 else [])
    for off in tries:
        trial = compile_without(off)
        code = render_code(trial)
        checked = _verify(trial, code)
        if any(v.status == "failed" for v in checked.values()):
            continue
        for name in failing:
            culprits = [p for p in off if p in c.ctx.applied[name]] or list(off)
            trial.ctx.internal_errors.append(InternalError(
                culprits[0] if len(culprits) == 1 else "+".join(culprits), name,
                "its output failed verification (" + one_line(verifications[name].detail)
                + f"); the file was compiled again without {', '.join(culprits)}, and that "
                "output verified", "verification"))
        return trial, code, checked
    return None


#: The longest reason an output's header and the CLI's warning line carry.
REASON_WIDTH = 300


def one_line(text: str) -> str:
    """``text`` as one line of a // comment or of stderr: whitespace runs collapsed, no
    trailing backslash (it would continue the comment onto the next line), at most
    REASON_WIDTH characters (the JSON's verification detail keeps it in full)."""
    line = " ".join(text.split())
    if len(line) > REASON_WIDTH:
        line = line[:REASON_WIDTH - 3] + "..."
    return line.rstrip("\\ ")


def _geometry(proc, spec: FileSpec | None) -> LaunchGeometry:
    kspec = spec.kernels.get(proc.name) if spec else None
    if kspec is None or proc.delinearized is not None:
        # (a 1-D kernel read as 2-D is launched over its 2-D space, not the naive one)
        return geometry(proc)
    return geometry(proc, block=None if proc.launch_block else kspec.block,
                    thread_space=kspec.threads)


def _textures(proc, c: Compiled) -> list[dict]:
    """The sidecar entries of a kernel's texture parameters (element counts from metadata)."""
    kspec = c.spec.kernels.get(proc.name) if c.spec else None
    # an inferred extent (verify/extents.py) has no expression a host could evaluate
    shapes = {a.name: " * ".join(a.shape) for a in kspec.args
              if a.shape and all(isinstance(d, str) for d in a.shape)} if kspec else {}
    return [texture_json(t, c.target, shapes.get(t.array)) for t in host_texture_params(proc)]


def _verify(c: Compiled, code: str) -> dict[str, Verification]:
    """Verify every kernel: the OpenCL form of the output against the naive input."""
    if c.spec is None:
        return {}
    unit, defines = c.unit, c.unit.defines
    try:
        naive = naive_program(unit, c.spec, {
            p.name: default_block(p) for p in c.module.procedures
            if p.pragma.block_id_axes or any(p.pragma.block_constant) or
            any(p.pragma.coarsened)})
        module = c.opencl_module()
    except NaiveoptError as exc:
        if c.target == "opencl":
            raise                       # the output itself is that translation
        # a CUDA output OpenCL cannot express (__brev, references into two address
        # spaces): written, and unverified, saying why
        where = f"{os.path.basename(exc.file)}:{exc.line}: " if exc.file and exc.line else ""
        why = f"verification runs OpenCL, which cannot express this kernel: {where}" \
              f"{exc.message}"
        return {name: Verification("skipped", why) for name in c.geometries}
    if c.target == "opencl":
        # (without the kernels carried as written: they are not verified, nor need build)
        out_source = code.replace(verbatim_block(c.module, c.target), "")
    else:
        out_source = render(module, "opencl", c.ctx.arch, c.geometries, {}, unit.path, None)
    output = Program(out_source, [], c.geometries,
                     {p.name: param_layout(p) for p in module.procedures},
                     size_args={p.name: p.size_params for p in module.procedures
                                if p.size_params})
    results = {}
    for name in c.geometries:
        kspec = c.spec.kernels.get(name)
        if kspec is None:
            results[name] = Verification("skipped", f"no metadata for kernel '{name}'")
            continue
        analysed = next((p for p in c.module.procedures if p.name == name), None)
        why = refusal(analysed, kspec)
        if why:
            results[name] = Verification("skipped", why)
            continue
        procs = {p.name: p for p in naive.module.procedures} if naive.module else {}
        kspec = with_kernel_facts(with_file_data(kspec, c.module, c.spec, defines),
                                  procs.get(name))
        result = verify_kernel(c.spec, kspec, naive, output, defines, unit.macros)
        if result.status == "passed" and analysed.grid_stride and not launch_changed(analysed):
            result = _on_one_block(c, name, kspec, naive, output, result)
        result.facts = facts(c.spec, kspec, size_sets(c.spec, defines), unit.fixed)
        if not c.ctx.changed(name):
            result = unchanged_kernel(result)
        results[name] = result
    return results


def _on_one_block(c: Compiled, name: str, kspec, naive: Program, output: Program,
                  result: Verification) -> Verification:
    """A grid-stride kernel whose launch no pass changed runs on the user's launch, which is
    often a fixed grid smaller than the elements (restore-grid-stride wrote its loop back):
    checked again on a launch of one block, the naive kernel on its full one."""
    geo = c.geometries[name]
    one = replace(geo, thread_space=(str(geo.block[0]),) + tuple(geo.thread_space[1:]))
    small = Program(output.source, [], {**output.geometry, name: one}, output.layouts,
                    size_args=output.size_args)
    again = verify_kernel(c.spec, kspec, naive, small, c.unit.defines, c.unit.macros)
    where = f"on one block of {geo.block[0]} threads (a grid-stride kernel's fixed grid)"
    if again.status == "passed":
        return Verification("passed", f"{result.detail}; {where}: match", result.checks +
                            [f"{where}: match"])
    return Verification(again.status, f"{where}: {again.detail}", result.checks + again.checks,
                        blames_output=again.blames_output)


def naive_program(unit: SourceUnit, spec: FileSpec,
                  blocks: dict[str, tuple[int, int]] | None = None) -> Program:
    """The naive kernel as an OpenCL program: the input itself for OpenCL (with the paper's
    predefined ids defined when it uses them), its functional-only translation for CUDA, made
    from a copy of the unit's parsed module.

    ``blocks`` gives the naive block of kernels whose blocks only the analysed module knows
    (an axis indexed by blockIdx alone runs one thread per block there: launch.default_block);
    metadata's block wins as everywhere."""
    module = unit.fresh_module()
    geometries = {}
    for proc in module.procedures:
        kspec = spec.kernels.get(proc.name)
        block = kspec.block if kspec and kspec.block else (blocks or {}).get(proc.name)
        geometries[proc.name] = geometry(proc, block=block,
                                         thread_space=kspec.threads if kspec else None,
                                         naive_coarsen=kspec.per_thread if kspec else None)
    if unit.dialect == "opencl":
        from .frontend.clang_setup import PAPER_IDS_OPENCL

        options = [f"-D{n}={PAPER_IDS_OPENCL[n]}" for n in module.paper_ids]
        # the input as written: its struct parameters packed (ir/structs.py)
        return Program(unit.source, options, geometries,
                       {p.name: input_layout(p) for p in module.procedures if p.struct_params},
                       module)
    ctx = PassContext(module, "opencl", "none")
    run_passes(front_passes()[:2] + back_passes("opencl"), ctx)
    return Program(render(module, "opencl", "none", geometries, {}, unit.path, None), [],
                   geometries, _struct_layouts(module), module)


def _struct_layouts(module: GModule) -> dict[str, list]:
    """How the naive kernels that take structs bind their members' arguments (the others
    take theirs as they are)."""
    return {p.name: param_layout(p) for p in module.procedures if p.struct_params}
