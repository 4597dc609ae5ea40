"""32-bit index arithmetic for GPU kernels whose buffers and loops all fit in 32 bits.

Relax shapes are int64, so the functions the Relax pipeline hands to the GPU rules index with
int64 loop variables, block iters and buffer shapes. Scheduled, every thread then computes its
addresses, tile offsets and bound checks in 64-bit registers (two 32-bit registers each on a
GPU): ViT-base's attention weighted sum (197 tokens) went from 27 registers and no spill with
int32 indices to 8 bytes spilled with int64 ones, the same code otherwise. TVM narrows the same
way (`ForceNarrowIndexToInt32`, `NarrowDataType`).

`narrow_indices(func)` returns `func` with every int64 loop variable, block iter, buffer shape
and index expression made int32 when that is exact:

- every buffer has a static shape of fewer than 2**31 elements (a symbolic dimension's value
  is unknown, so such a function stays as it is), and every loop and block iter a static range;
- every index expression, and every subexpression of one, is bounded within int32 given those
  ranges (`const_int_bound`).

Values are untouched: a narrowed variable used as data (an `arange`, an argmax's index stored
into an int64 buffer) is cast back to int64 where it is used. Anything else (a function
without int64 indices, or one that fails a condition) comes back unchanged.

>>> from graphc import te, tir
>>> A = te.placeholder((tir.const(4, "int64"), tir.const(6, "int64")), name="A")
>>> B = te.compute(A.shape, lambda i, j: A[i, j] * 2.0, name="B")
>>> func = narrow_indices(te.create_prim_func([A, B]))
>>> [str(s.dtype) for s in func.buffer_map[func.params[0]].shape]
['int32', 'int32']
"""

from __future__ import annotations

from ...ir.dtype import DataType
from ...tir.arith.bound import ConstIntBound, const_int_bound
from ...tir.expr import (
    Add,
    Cast,
    CmpOp,
    FloorDiv,
    FloorMod,
    IntImm,
    Max,
    Min,
    Mul,
    PrimExpr,
    Range,
    Select,
    Sub,
    Var,
)
from ...tir.function import PrimFunc
from ...tir.functor import StmtExprMutator, StmtExprVisitor
from ...tir.stmt import Block, For

_INT32 = ConstIntBound(-(1 << 31), (1 << 31) - 1)
_ARITH = (Add, Sub, Mul, FloorDiv, FloorMod, Min, Max)


class _Refuse(Exception):
    """A condition of the module docstring does not hold: leave the function as it is."""


def _is64(e) -> bool:
    return isinstance(e, PrimExpr) and e.dtype == "int64"


class _Collect(StmtExprVisitor):
    """The int64 loop variables and block iters, with their static ranges; the buffers."""

    def __init__(self):
        self.ranges: dict = {}  # int64 Var -> (min, extent) as Python ints
        self.buffers: dict = {}  # id -> Buffer
        self.blocks_with_match = False

    def visit_buffer_use(self, buffer):
        self.buffers[id(buffer)] = buffer

    def visit_For(self, op: For):
        if _is64(op.loop_var):
            if not isinstance(op.min, IntImm) or not isinstance(op.extent, IntImm):
                raise _Refuse
            self.ranges[op.loop_var] = (op.min.value, op.extent.value)
        super().visit_For(op)

    def visit_Block(self, op: Block):
        if op.match_buffers:
            raise _Refuse
        for iv in op.iter_vars:
            if _is64(iv.var):
                dom = iv.dom
                if dom is None or not isinstance(dom.min, IntImm) or not isinstance(dom.extent, IntImm):
                    raise _Refuse
                self.ranges[iv.var] = (dom.min.value, dom.extent.value)
        for buf in op.alloc_buffers:
            self.buffers[id(buf)] = buf
        super().visit_Block(op)


def _fits(buf) -> bool:
    n = 1
    for s in (*buf.shape, *buf.strides):
        if not isinstance(s, IntImm):
            return False
        n *= max(int(s.value), 1)
    offset = buf.elem_offset
    return n < (1 << 31) and (offset is None or isinstance(offset, IntImm))


class _Narrow(StmtExprMutator):
    def __init__(self, vars32: dict, buffers: dict, bounds: dict):
        self.vars32 = vars32  # int64 Var -> int32 Var
        self.buffers = buffers  # id(old Buffer) -> new Buffer
        self.bounds = bounds  # int32 Var -> ConstIntBound
        self.memo: dict = {}

    # -- index expressions ---------------------------------------------------------------------

    def index(self, e: PrimExpr, strict: bool = False) -> PrimExpr:
        """`e` (already visited) as an int32 expression, every subexpression checked; `strict`:
        refuse rather than cast a data value (a comparison may be of data, not of indices)."""
        if not _is64(e):
            return e
        out = self._narrow(e, strict)
        bound = const_int_bound(out, self.bounds.get, self.memo)
        if bound.min_value < _INT32.min_value or bound.max_value > _INT32.max_value:
            raise _Refuse
        return out

    def _narrow(self, e: PrimExpr, strict: bool) -> PrimExpr:
        if isinstance(e, IntImm):
            if not _INT32.contains(e.value):
                raise _Refuse
            return IntImm("int32", e.value)
        if isinstance(e, Cast) and e.value.dtype == "int32":
            return e.value
        if isinstance(e, _ARITH):
            a, b = self._narrow(e.a, strict), self._narrow(e.b, strict)
            for x in (a, b):  # every step must fit, not only the result
                bound = const_int_bound(x, self.bounds.get, self.memo)
                if not (_INT32.contains(bound.min_value) and _INT32.contains(bound.max_value)):
                    raise _Refuse
            return type(e)(a, b, "int32")
        if isinstance(e, Select):
            a, b = self._narrow(e.true_value, strict), self._narrow(e.false_value, strict)
            return Select(e.condition, a, b, "int32")
        if strict:
            raise _Refuse
        # data used as an index (a gather's int64 index value): it addresses a buffer of fewer
        # than 2**31 elements, so a valid one fits
        return Cast("int32", e)

    def visit_Var(self, op: Var):
        v = self.vars32.get(op)
        return op if v is None else Cast("int64", v)  # a value keeps its type where it is used

    def visit_CmpOp(self, op: CmpOp):
        op = super().visit_CmpOp(op)
        if _is64(op.a) and _is64(op.b):
            try:
                return op.replace(a=self.index(op.a, True), b=self.index(op.b, True))
            except _Refuse:
                return op
        return op

    def visit_buffer(self, buffer):
        return self.buffers.get(id(buffer), buffer)

    def visit_BufferLoad(self, op):
        op = super().visit_BufferLoad(op)
        return op.replace(indices=tuple(self.index(i) for i in op.indices))

    def visit_BufferStore(self, op):
        op = super().visit_BufferStore(op)
        return op.replace(indices=tuple(self.index(i) for i in op.indices))

    def visit_range(self, r):
        r = super().visit_range(r)
        return Range(self.index(r.min), self.index(r.extent))

    def visit_For(self, op: For):
        op = super().visit_For(op)
        loop_var = self.vars32.get(op.loop_var, op.loop_var)
        return op.replace(loop_var=loop_var, min=self.index(op.min), extent=self.index(op.extent))

    def visit_iter_var(self, iv):
        iv = super().visit_iter_var(iv)
        return iv.replace(var=self.vars32.get(iv.var, iv.var))

    def visit_Block(self, op: Block):
        op = super().visit_Block(op)
        return op.replace(alloc_buffers=tuple(self.visit_buffer(b) for b in op.alloc_buffers))

    def visit_BlockRealize(self, op):
        op = super().visit_BlockRealize(op)
        return op.replace(iter_values=tuple(self.index(v) for v in op.iter_values))


def _narrow_buffer(buf):
    def small(x):
        return IntImm("int32", x.value) if isinstance(x, IntImm) and x.dtype == "int64" else x

    return buf.replace(shape=tuple(small(s) for s in buf.shape), strides=tuple(small(s) for s in buf.strides),
                       elem_offset=None if buf.elem_offset is None else small(buf.elem_offset))


def narrow_indices(func: PrimFunc) -> PrimFunc:
    """`func` with int32 indices where that is exact (module docstring), else `func`."""
    if not isinstance(func, PrimFunc):
        return func
    if any(not DataType(p.dtype).is_handle and p.dtype == "int64" for p in func.params):
        return func  # an int64 scalar parameter may be a size
    collect = _Collect()
    try:
        collect.visit_stmt(func.body)
    except _Refuse:
        return func
    buffers = {**collect.buffers, **{id(b): b for b in func.buffer_map.values()}}
    if not collect.ranges and not any(_is64(s) for b in buffers.values() for s in b.shape):
        return func
    if not all(_fits(b) for b in buffers.values()):
        return func
    vars32 = {v: Var(v.name, "int32") for v in collect.ranges}
    bounds = {vars32[v]: ConstIntBound(lo, lo + max(n, 1) - 1) for v, (lo, n) in collect.ranges.items()}
    new_buffers = {k: _narrow_buffer(b) for k, b in buffers.items()}
    mutator = _Narrow(vars32, new_buffers, bounds)
    try:
        body = mutator.visit_stmt(func.body)
    except _Refuse:
        return func
    buffer_map = {p: new_buffers[id(b)] for p, b in func.buffer_map.items()}
    return PrimFunc(func.params, body, func.ret_type, buffer_map, func.attrs)


__all__ = ["narrow_indices"]
