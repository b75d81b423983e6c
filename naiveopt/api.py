"""The Python API: ``naiveopt.optimize(source, target=..., arch=...)``.

It parses a kernel file, runs the pass pipeline (passes/pipeline.py), renders the output through
the templates, and verifies every kernel against its naive input on the OpenCL device. The CLI
is a thin layer over this function.
"""
from __future__ import annotations

import copy
import os
from dataclasses import dataclass, field

from .emit import render
from .errors import NaiveoptError
from .frontend import dialect_of, fixed_macros, macro_defines, parse_module
from .ir import GModule, Resources
from .ir.textures import host_texture_params, param_layout
from .launch import LaunchGeometry, apply_extents, geometry, texture_json
from .passes.manager import PassContext, Remark, run_passes
from .passes.pipeline import (back_passes, front_passes, optimization_pass_names,
                              optimization_passes)
from .verify.check import Program, Verification, verify_kernel
from .verify.spec import (FileSpec, apply_launch_facts, load_metadata, metadata_path,
                          spec_from_pragmas)

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

    def launch_json(self) -> dict:
        """The kernel's entry in the launch sidecar: geometry, and textures when it has any."""
        out = self.geometry.to_json()
        if self.textures:
            out["textures"] = self.textures
        return out

    def to_json(self) -> dict:
        return {"name": self.name, "passes": self.passes, "launch": self.launch_json(),
                "resources": self.resources.__dict__ if self.resources else None,
                "verified": self.verification.status == "passed",
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

    @property
    def verified(self) -> bool:
        """True when every kernel was checked and passed."""
        return all(k.verification.status == "passed" for k in self.kernels)

    @property
    def failed(self) -> bool:
        return any(k.verification.status == "failed" for k in self.kernels)

    def launch_json(self) -> dict:
        return {"input": self.input, "target": self.target, "arch": self.arch,
                "kernels": {k.name: k.launch_json() for k in self.kernels}}

    def to_json(self) -> dict:
        return {"input": self.input, "target": self.target, "arch": self.arch,
                "verified": self.verified, "kernels": [k.to_json() for k in self.kernels],
                "remarks": [r.to_json() for r in self.remarks]}


MEMORIES = ("global", "texture")


def compile_module(source: str, filename: str, target: str | None, arch: str, opt: bool,
                   defines: dict[str, str], metadata: str | None = None,
                   dump_ir: str | None = None, options: dict | None = None) -> Compiled:
    """Parse, run the pipeline and write the kernels back out in ``target``'s dialect."""
    dialect = dialect_of(filename)
    target = target or dialect
    if target not in TARGETS:
        raise NaiveoptError(f"unknown target '{target}' (expected cuda or opencl)")
    module = parse_module(filename, source, defines)
    meta = metadata or metadata_path(filename)
    metadata_spec = load_metadata(meta) if os.path.exists(meta) else None
    apply_launch_facts(module, metadata_spec)
    apply_extents(module, *fixed_macros(source, defines))
    options = dict(options or {})
    disabled = frozenset(options.get("disable", ()))
    unknown = sorted(disabled - set(optimization_pass_names()))
    if unknown:
        raise NaiveoptError(f"unknown pass '{unknown[0]}' (optimization passes: "
                            f"{', '.join(optimization_pass_names())})")
    if options.get("memory", "global") not in MEMORIES:
        raise NaiveoptError(f"unknown memory '{options['memory']}' (expected "
                            f"{' or '.join(MEMORIES)})")
    ctx = PassContext(module, target, arch, options)
    passes = front_passes() + (optimization_passes(disabled) if opt else [])
    run_passes(passes, ctx, dump_ir)
    analysed = copy.deepcopy(module)
    completed = list(ctx.completed)
    run_passes(back_passes(target), ctx, dump_ir)
    spec = metadata_spec or spec_from_pragmas(module)
    geometries = {p.name: _geometry(p, spec) for p in module.procedures}
    return Compiled(module, analysed, completed, ctx, spec, geometries, target, dialect)


@dataclass
class Compiled:
    """A file after the pipeline: the final module, the analysed one (before write-back),
    the verification spec and each kernel's launch geometry."""

    module: GModule
    analysed: GModule
    completed: list[str]
    ctx: PassContext
    spec: FileSpec | None
    geometries: dict[str, LaunchGeometry]
    target: str
    dialect: str

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
             dump_ir: str | None = None, options: dict | None = None,
             sidecar_name: str | None = None) -> OptimizeResult:
    """Optimize the kernels of one file.

    ``filename`` names the source (its extension gives the dialect; metadata is looked up
    beside it); ``target`` defaults to the input's dialect. ``metadata`` overrides the metadata
    path. Raises NaiveoptError for bad input.
    """
    defines = dict(defines or {})
    c = compile_module(source, filename, target, arch, opt, defines, metadata, dump_ir, options)
    code = render(c.module, c.target, arch, c.geometries, c.ctx.applied,
                  os.path.basename(filename), sidecar_name)
    verifications = _verify(source, filename, c, code, defines) if verify else {}
    kernels = [KernelResult(p.name, c.ctx.applied.get(p.name, []), c.geometries[p.name],
                            p.resources, verifications.get(p.name, Verification(
                                "skipped", "verification disabled (--no-verify)")),
                            _textures(p, c))
               for p in c.module.procedures]
    return OptimizeResult(code, filename, c.target, arch, kernels, c.ctx.remarks)


def _geometry(proc, spec: FileSpec | None) -> LaunchGeometry:
    kspec = spec.kernels.get(proc.name) if spec else None
    if kspec is None:
        return geometry(proc)
    return geometry(proc, block=None if proc.launch_block else kspec.block,
                    thread_space=kspec.threads)


def _textures(proc, c: Compiled) -> list[dict]:
    """The sidecar entries of a kernel's texture parameters (element counts from metadata)."""
    kspec = c.spec.kernels.get(proc.name) if c.spec else None
    shapes = {a.name: " * ".join(a.shape) for a in kspec.args if a.shape} if kspec else {}
    return [texture_json(t, c.target, shapes.get(t.array)) for t in host_texture_params(proc)]


def _verify(source: str, filename: str, c: Compiled, code: str, defines: dict[str, str]
            ) -> dict[str, Verification]:
    """Verify every kernel: the OpenCL form of the output against the naive input."""
    if c.spec is None:
        return {}
    naive = naive_program(source, filename, c.dialect, defines, c.spec)
    module = c.opencl_module()
    if c.target == "opencl":
        out_source = code
    else:
        out_source = render(module, "opencl", c.ctx.arch, c.geometries, {}, filename, None)
    output = Program(out_source, [], c.geometries,
                     {p.name: param_layout(p) for p in module.procedures})
    results = {}
    for name in c.geometries:
        kspec = c.spec.kernels.get(name)
        if kspec is None:
            results[name] = Verification("skipped", f"no metadata for kernel '{name}'")
            continue
        results[name] = verify_kernel(c.spec, kspec, naive, output, defines,
                                      macro_defines(source, defines))
    return results


def naive_program(source: str, filename: str, dialect: str, defines: dict[str, str],
                   spec: FileSpec) -> Program:
    """The naive kernel as an OpenCL program: the input itself for OpenCL (with the paper's
    predefined ids defined when it uses them), its functional-only translation for CUDA."""
    module = parse_module(filename, source, defines)
    geometries = {}
    for proc in module.procedures:
        kspec = spec.kernels.get(proc.name)
        geometries[proc.name] = geometry(proc, block=kspec.block if kspec else None,
                                         thread_space=kspec.threads if kspec else None)
    if dialect == "opencl":
        from .frontend.clang_setup import PAPER_IDS_OPENCL

        options = [f"-D{n}={PAPER_IDS_OPENCL[n]}" for n in module.paper_ids]
        return Program(source, options, geometries)
    ctx = PassContext(module, "opencl", "none")
    run_passes(front_passes()[:2] + back_passes("opencl"), ctx)
    return Program(render(module, "opencl", "none", geometries, {}, filename, None), [],
                   geometries)
