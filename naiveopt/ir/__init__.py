"""The GPU intermediate representation (paper 002 Fig. 3): GProcedure and its parts."""
from . import copying  # noqa: F401  (deep copies share immutable parts: ir/copying.py)
from .gprocedure import (GLoop, GlobalVar, GModule, GPragma, GProcedure, IndexDecomposition,
                         MemoryExpression, Param, Resources)
from .nodes import PredefId, PREDEFINED_IDS

__all__ = ["GLoop", "GlobalVar", "GModule", "GPragma", "GProcedure", "IndexDecomposition",
           "MemoryExpression", "Param", "PredefId", "PREDEFINED_IDS", "Resources"]
