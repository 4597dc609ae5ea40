"""TensorIR analyses: well-formedness verification, block access regions, variable use.

`get_block_access_region` loads on first use (its module depends on the simplifier).
"""

from .var_use import uses_any_var, uses_var
from .verify_well_formed import verify_well_formed

__all__ = ["verify_well_formed", "get_block_access_region", "uses_var", "uses_any_var"]


def __getattr__(name):
    if name == "get_block_access_region":
        from .block_access import get_block_access_region

        return get_block_access_region
    raise AttributeError(f"module 'graphc.tir.analysis' has no attribute {name!r}")
