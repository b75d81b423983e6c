"""Emission: jinja2 templates (templates/) turn the final IR into a CUDA or OpenCL file."""
from __future__ import annotations

import os
from functools import cache

import jinja2

from . import __version__
from .ir import GModule, GProcedure
from .ir.cgen import to_c
from .launch import LaunchGeometry

TEMPLATE_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                            "templates")


@cache
def _env() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATE_DIR),
                              undefined=jinja2.StrictUndefined, trim_blocks=True,
                              lstrip_blocks=True, keep_trailing_newline=True)


def render(module: GModule, target: str, arch: str, geometries: dict[str, LaunchGeometry],
           passes: dict[str, list[str]], source_name: str, sidecar: str | None) -> str:
    """The output file for ``module`` (whose trees are already in ``target``'s dialect)."""
    template = _env().get_template("cuda.cu.j2" if target == "cuda" else "opencl.cl.j2")
    kernels = [{"name": p.name, "code": to_c(p.func).rstrip(), "geometry": geometries[p.name],
                "passes": passes.get(p.name, [])} for p in module.procedures]
    text = template.render(version=__version__, source=source_name, arch=arch,
                           kernels=kernels, helpers=[to_c(h).rstrip() for h in module.helpers],
                           macros=module.macros, sidecar=sidecar)
    return text.rstrip() + "\n"


def render_cuda_kernel(module: GModule, proc: GProcedure) -> str:
    """A minimal CUDA file with one (postprocessed) kernel, for resource queries."""
    parts = [f"#ifndef {k}\n#define {k} {v}\n#endif" for k, v in module.macros.items()]
    parts += [to_c(h) for h in module.helpers]
    parts.append(to_c(proc.func))
    return "\n".join(parts) + "\n"
