"""Targets and code generation: `Target`, intrinsic lowering rules, the LLVM back end.

>>> from graphc.target import Target
>>> Target("llvm").kind
'llvm'
"""

from .intrin import register_intrin_lowering
from .target import Target

__all__ = ["Target", "register_intrin_lowering"]
