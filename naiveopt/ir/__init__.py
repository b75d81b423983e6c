"""The GPU intermediate representation (paper 002 Fig. 3): GProcedure and its parts."""
from .gprocedure import (GLoop, GlobalVar, GModule, GPragma, GProcedure, IndexDecomposition,
                         MemoryExpression, Param, Resources)
from .nodes import PredefId, PREDEFINED_IDS

__all__ = ["GLoop", "GlobalVar", "GModule", "GPragma", "GProcedure", "IndexDecomposition",
           "MemoryExpression", "Param", "PredefId", "PREDEFINED_IDS", "Resources"]
