"""AnnotateTIROpPattern: record each PrimFunc's fusion pattern as its `op_pattern` attribute.

FuseOps reads `op_pattern` (an `OpPatternKind` as an int) to decide what may fuse with
what. A PrimFunc whose `op_pattern` is already set to a non-zero value keeps it (TVM's rule:
zero, elementwise, is re-derived); every other one gets the pattern
`relax.analysis.analyze_op_pattern_kind` derives from its blocks. Running the pass twice
changes nothing the second time, and a module it does not change comes back as the same
object.

>>> from graphc import relax
>>> from graphc.script import from_source
>>> mod = from_source('''
... @I.ir_module
... class Module:
...     @T.prim_func(private=True)
...     def exp(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
...         for i in range(8):
...             with T.block("B"):
...                 vi = T.axis.spatial(8, i)
...                 B[vi] = T.exp(A[vi])
... ''')
>>> annotated = relax.transform.AnnotateTIROpPattern()(mod)
>>> annotated["exp"].attrs["op_pattern"]
0
>>> relax.transform.AnnotateTIROpPattern()(annotated) is annotated
True
"""

from __future__ import annotations

from ...ir.transform import module_pass
from ...tir.function import PrimFunc
from ..analysis.tir_op_pattern import analyze_op_pattern_kind

__all__ = ["AnnotateTIROpPattern"]


@module_pass(opt_level=0, name="AnnotateTIROpPattern", copy=False)
class AnnotateTIROpPattern:
    """Set `attrs["op_pattern"]` on every PrimFunc that lacks a non-zero one."""

    def transform_module(self, mod, ctx):
        updates = {}
        for gv, func in mod.items():
            if not isinstance(func, PrimFunc) or func.attrs.get("op_pattern"):
                continue
            kind = int(analyze_op_pattern_kind(func))
            if func.attrs.get("op_pattern") != kind:
                # Keys sorted, as TVM keeps attribute dicts (and prints them).
                attrs = dict(sorted({**func.attrs, "op_pattern": kind}.items()))
                updates[gv] = func.replace(attrs=attrs)
        if not updates:
            return mod
        new = mod.copy()
        for gv, func in updates.items():
            new[gv] = func
        return new
