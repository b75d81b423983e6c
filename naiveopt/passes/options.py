"""The options of one pipeline run, parsed once into a typed value the passes read.

The command line (``--passes``, ``--disable-pass``, ``--merge``, ``--memory``, ``--vectorize``,
``--fp-strict``, ``--register-tile``, ``--pipeline-stages``),
the Python API (``options={...}``, ``passes=[...]``, ``pipeline="..."``) and the fuzzer each
build a :class:`PipelineOptions`; the pass context carries it. Its fields are checked when it is
made, so a pass never meets a misspelt memory or a merge factor of zero. Which pass names exist
is the pipeline's knowledge (pipeline.py checks ``passes`` and ``disable`` against it), not
this module's: the order of the passes stays written once.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields

from ..errors import NaiveoptError

#: Where read-only arrays are read from (``--memory``).
MEMORIES = ("global", "texture")
#: When the vectorize pass applies (``--vectorize``).
VECTORIZE_MODES = ("auto", "always", "never")
#: partition-camping: apply a remedy where the target model says so, or always (for testing).
PARTITION_CAMPING_MODES = ("auto", "force")
#: Whether a pass must be estimated faster than the kernel as written (``--cost-model``, as
#: GCC's -fvect-cost-model): default: yes; unlimited: apply the best variant regardless.
COST_MODELS = ("default", "unlimited")
#: The most shared buffers an asynchronous tile pipeline may have (``--pipeline-stages``).
MAX_STAGES = 4


@dataclass(frozen=True)
class PipelineOptions:
    """How the optimization passes run.

    ``passes`` is None for the default pipeline, else exactly the optimization passes to run,
    in order (an empty tuple runs none); ``disable`` names passes replaced by a remark."""

    passes: tuple[str, ...] | None = None
    disable: tuple[str, ...] = ()
    memory: str = "global"
    vectorize: str = "auto"
    merge: tuple[int, int] | None = None      # forced thread-merge factors (x, y)
    register_tile: tuple[int, int] | None = None  # forced register-tiled micro-tile (x, y)
    pipeline_stages: int | None = None        # forced async-pipeline stages (1: none)
    partition_camping: str = "auto"
    fp_strict: bool = False                   # floating-point arithmetic keeps its order
    cost_model: str = "default"               # unlimited: no as-written profitability test

    def __post_init__(self) -> None:
        _check_choice("memory", self.memory, MEMORIES)
        _check_choice("vectorize", self.vectorize, VECTORIZE_MODES)
        _check_choice("partition_camping", self.partition_camping, PARTITION_CAMPING_MODES)
        _check_choice("cost_model", self.cost_model, COST_MODELS)
        if self.merge is not None:
            merge = tuple(self.merge)
            if not (len(merge) == 2 and all(type(v) is int and v > 0 for v in merge)):
                raise NaiveoptError(f"bad merge {self.merge!r}: expected two positive "
                                    "integers (X, Y), e.g. (1, 4)")
            object.__setattr__(self, "merge", merge)
        if self.register_tile is not None:
            tile = tuple(self.register_tile)
            if not (len(tile) == 2 and all(type(v) is int and v > 0 and v % 4 == 0
                                           for v in tile)):
                raise NaiveoptError(f"bad register tile {self.register_tile!r}: expected two "
                                    "positive multiples of 4 (X, Y), e.g. (8, 8)")
            object.__setattr__(self, "register_tile", tile)
        if self.pipeline_stages is not None and not (
                type(self.pipeline_stages) is int and 1 <= self.pipeline_stages <= MAX_STAGES):
            raise NaiveoptError(f"bad pipeline stages {self.pipeline_stages!r}: expected 1 "
                                f"(no pipeline) to {MAX_STAGES}")
        if self.passes is not None:
            object.__setattr__(self, "passes", _names("passes", self.passes))
        object.__setattr__(self, "disable", _names("disable", self.disable))

    @classmethod
    def from_mapping(cls, options: Mapping | None) -> PipelineOptions:
        """The API's ``options`` dict (``{"memory": "texture", "disable": [...], "merge":
        (1, 4), ...}``), its keys the field names; an unknown key is an error."""
        options = dict(options or {})
        known = [f.name for f in fields(cls)]
        unknown = sorted(set(options) - set(known))
        if unknown:
            raise NaiveoptError(f"unknown option '{unknown[0]}' (options: {', '.join(known)})")
        return cls(**options)


def parse_pipeline(text: str) -> tuple[str, ...]:
    """``"coalesce,thread-merge"`` (``--passes``, ``pipeline=``) as pass names, in order.

    Names are separated by commas, blanks around them ignored; an empty text is the empty
    pipeline. An empty name is an error located at its column."""
    if not text.strip():
        return ()
    names, column = [], 1
    for item in text.split(","):
        name = item.strip()
        if not name:
            raise NaiveoptError(f"empty pass name at column {column} of pipeline '{text}'")
        names.append(name)
        column += len(item) + 1
    return tuple(names)


def parse_merge(text: str) -> tuple[int, int]:
    """``--merge X:Y`` as the factors (X, Y)."""
    x, sep, y = text.partition(":")
    if not (sep and x.isdigit() and y.isdigit() and int(x) > 0 and int(y) > 0):
        raise NaiveoptError(f"bad --merge '{text}': expected X:Y, e.g. 1:4")
    return int(x), int(y)


def _check_choice(name: str, value: object, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise NaiveoptError(f"unknown {name} '{value}' (expected {' or '.join(choices)})")


def _names(field: str, names: Iterable[str] | str) -> tuple[str, ...]:
    """``names`` as a tuple of strings (a lone string is a mistake: it is not split)."""
    if isinstance(names, str) or not all(isinstance(n, str) for n in names):
        raise NaiveoptError(f"bad {field} {names!r}: expected a list of pass names")
    return tuple(names)
