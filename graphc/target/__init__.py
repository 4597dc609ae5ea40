"""Targets and code generation: `Target`, intrinsic lowering rules, the build table, the LLVM back end.

>>> from graphc.target import Target
>>> Target("llvm").kind
'llvm'
"""

from .backends import build, register_backend
from .intrin import register_intrin_lowering
from .target import Target

__all__ = ["Target", "build", "register_backend", "register_intrin_lowering"]
