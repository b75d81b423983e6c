"""The cost model: estimated time of a kernel launch on a target, and the bound that sets it
(model.py). Every performance estimate naiveopt makes comes from here."""
from .model import Estimate, KernelWork, dram_bytes, estimate, loads_in_flight

__all__ = ["Estimate", "KernelWork", "dram_bytes", "estimate", "loads_in_flight"]
