"""CPU default-schedule rules: `Reduction` for row/column reductions, `Fallback` for everything else."""

from .fallback import Fallback
from .reduction import Reduction

__all__ = ["Fallback", "Reduction"]
