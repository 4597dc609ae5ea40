"""`LowerThreadAllreduce`: `T.tvm_thread_allreduce` as code a GPU runs (TVM's pass of that name).

`tvm_thread_allreduce(kind, value, cond, dest[0], tx, ...)` combines `value` over the threads
`tx, ...` of each block (the other thread indices of the block tell independent groups apart)
and leaves the result in `dest[0]` of every thread. Two lowerings:

- a tree in shared memory (any target): every thread stores its value, then for
  s = P/2, P/4, .., 1 (P the group size rounded up to a power of two) thread r adds the value
  of thread r + s, with a barrier after each step; everyone reads element 0;
- warp shuffles (`warp_size` > 1, CUDA): when the reduction runs over `threadIdx.x` alone and
  its extent is a power of two up to the warp size, `__shfl_down_sync` folds each segment of a
  warp and `__shfl_sync` broadcasts lane 0; when the extent is a multiple of the warp size (up
  to warp size squared), each warp folds its lanes, lane 0 of each warp stores its partial in
  shared memory, and every warp folds the partials again (no second barrier).

The reduced thread extents must be constants equal to what the kernel launches (every thread
of a group must take part), and every other `threadIdx` the kernel launches must be in scope.

>>> from graphc.script import from_source
>>> f = from_source('''
... @T.prim_func
... def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4,), "float32")):
...     bx = T.launch_thread("blockIdx.x", 4)
...     tx = T.launch_thread("threadIdx.x", 8)
...     acc = T.allocate([1], "float32", "local")
...     acc_1 = T.Buffer((1,), "float32", data=acc, scope="local")
...     T.evaluate(T.tvm_thread_allreduce("sum", A[bx, tx], T.bool(True), acc_1[0], tx))
...     B[bx] = acc_1[0]
... ''')
>>> text = lower_thread_allreduce(f, warp_size=1).script()
>>> text.count("T.tvm_storage_sync"), "red_buf_1_1[tx] = red_buf_1_1[tx] + red_buf_1_1[tx + 4]" in text
(5, True)
>>> "tvm_warp_shuffle_down" in lower_thread_allreduce(f, warp_size=32).script()
True
"""

from __future__ import annotations

import math

from ...errors import TIRError
from ...ir.dtype import DataType
from ..analysis.thread_scope import is_thread_scope, kernel_roots, launch_extents
from ..buffer import decl_buffer
from ..expr import (
    BufferLoad,
    Call,
    IntImm,
    StringImm,
    Var,
    const,
    convert,
    max_value_of,
    min_value_of,
)  # fmt: skip
from ..function import PrimFunc
from ..functor import StmtMutator
from ..op import if_then_else, max_value, min_value
from ..stmt import Allocate, BufferStore, IfThenElse, LetStmt, SeqStmt
from .function_pass import prim_func_pass
from .inject_thread_sync import storage_sync

_COMBINE = {
    "sum": lambda a, b: a + b,
    "prod": lambda a, b: a * b,
    "max": max_value_of,
    "min": min_value_of,
}


def identity(kind: str, dtype: str):
    """The value that leaves any other unchanged under `kind`."""
    if kind == "sum":
        return const(0, dtype)
    if kind == "prod":
        return const(1, dtype)
    if DataType(dtype).is_float:  # te.max / te.min start from -inf / inf
        return const(-math.inf if kind == "max" else math.inf, dtype)
    return min_value(dtype) if kind == "max" else max_value(dtype)


def _pow2_ceil(n: int) -> int:
    p = 1
    while p < n:
        p *= 2
    return p


def _warp_call(name: str, dtype: str, *args):
    return Call(dtype, f"tir.tvm_warp_{name}", tuple(args))


class _Lower(StmtMutator):
    def __init__(self, warp_size: int, func_name: str):
        self.warp_size, self.func_name = warp_size, func_name
        self.launch: dict = {}
        self.scope: dict = {}  # tag -> (var, extent) of the enclosing thread scopes
        self.count = 0

    def visit_AttrStmt(self, op):
        if not is_thread_scope(op):
            return super().visit_AttrStmt(op)
        outer = not self.scope
        if outer:
            self.launch = launch_extents(op)
        tag = op.node.thread_tag
        saved = self.scope.get(tag)
        self.scope[tag] = (op.node.var, op.value)
        try:
            return super().visit_AttrStmt(op)
        finally:
            if saved is None:
                del self.scope[tag]
            else:
                self.scope[tag] = saved

    def visit_Evaluate(self, op):
        call = op.value
        if not (isinstance(call, Call) and call.op == "tir.tvm_thread_allreduce"):
            return op
        return self.lower(call)

    # -- the lowering -------------------------------------------------------------------------
    def error(self, message: str):
        raise TIRError(f"{self.func_name}: cannot lower tvm_thread_allreduce: {message}")

    def lower(self, call: Call):
        kind_arg, value, cond, dest, *threads = call.args
        kind = kind_arg.value if isinstance(kind_arg, StringImm) else str(kind_arg)
        if kind not in _COMBINE:
            self.error(f"unknown reduction {kind!r}; expected one of {', '.join(_COMBINE)}")
        if not isinstance(dest, BufferLoad):
            self.error(f"the destination must be a load of a local buffer, got {dest!r}")
        by_var = {var: tag for tag, (var, _) in self.scope.items()}
        reduce_tags = []
        for t in threads:
            tag = by_var.get(t)
            if tag is None or not tag.startswith("threadIdx"):
                self.error(f"{t} is not a threadIdx of an enclosing thread scope")
            reduce_tags.append(tag)
        extents = {}
        for tag in [*reduce_tags, *self.group_tags(reduce_tags)]:
            launched, local = self.launch.get(tag), self.scope.get(tag, (None, None))[1]
            if not isinstance(launched, IntImm):
                self.error(f"the kernel launches {tag} with a non-constant extent {launched}")
            if local is None:
                self.error(f"{tag} is launched by the kernel but not in scope here; move the reduction "
                           f"inside the loop bound to {tag}")
            if not (isinstance(local, IntImm) and local.value == launched.value):
                self.error(f"the reduction runs over {tag} < {local}, but the kernel launches "
                           f"{launched.value} threads on {tag}; every thread of a group must take part")
            extents[tag] = launched.value
        reduce_tags = sorted(reduce_tags)
        group_tags = self.group_tags(reduce_tags)
        self.count += 1
        dtype = value.dtype
        start = if_then_else(cond, value, identity(kind, dtype)) if not _is_true(cond) else value
        group_size = 1
        for tag in reduce_tags:
            group_size *= extents[tag]
        x_extent = extents.get("threadIdx.x", 1)
        warp = self.warp_size
        can_shuffle = warp > 1 and reduce_tags == ["threadIdx.x"] and DataType(dtype).lanes == 1 \
            and not DataType(dtype).is_bool
        if can_shuffle and group_size <= warp and group_size & (group_size - 1) == 0:
            return self.single_warp(kind, dtype, start, dest, group_size)
        if can_shuffle and group_size % warp == 0 and group_size // warp <= warp and x_extent == group_size:
            return self.multi_warp(kind, dtype, start, dest, group_size, group_tags, extents)
        return self.shared_tree(kind, dtype, start, dest, reduce_tags, group_tags, extents)

    def group_tags(self, reduce_tags) -> list:
        return sorted(tag for tag, ext in self.launch.items() if tag.startswith("threadIdx")
                      and tag not in reduce_tags and not (isinstance(ext, IntImm) and ext.value == 1))

    def linear(self, tags: list, extents: dict):
        index, stride = None, 1
        for tag in tags:
            var = self.scope[tag][0]
            term = var if stride == 1 else var * stride
            index = term if index is None else index + term
            stride *= extents[tag]
        return index if index is not None else const(0), stride

    def new_var(self, name: str, dtype: str) -> Var:
        return Var(f"{name}_{self.count}", dtype)

    def store_dest(self, dest: BufferLoad, value):
        return BufferStore(dest.buffer, value, dest.indices)

    def shared_tree(self, kind, dtype, start, dest, reduce_tags, group_tags, extents):
        r, size = self.linear(reduce_tags, extents)
        g, groups = self.linear(group_tags, extents)
        buf = decl_buffer((groups * size,), dtype, f"red_buf_{self.count}", scope="shared")
        base = g * size if groups > 1 else None

        def at(index):
            return (index if base is None else base + index,)

        combine = _COMBINE[kind]
        stmts = [BufferStore(buf, start, at(r)), storage_sync()]
        span = _pow2_ceil(size) // 2
        while span >= 1:
            guard = r < span
            if 2 * span > size:
                guard = guard & (r + span < size)
            step = BufferStore(buf, combine(buf[at(r)], buf[at(r + span)]), at(r))
            stmts += [IfThenElse(guard, step), storage_sync()]
            span //= 2
        stmts += [self.store_dest(dest, buf[at(const(0))]), storage_sync()]
        body = SeqStmt(tuple(stmts))
        return Allocate(buf.data, dtype, (const(groups * size),), const(True), body, "shared")

    def fold(self, kind, dtype, value, mask, offsets, width, name):
        """Lets that fold `value` down the warp by `offsets`; returns (lets, the last value)."""
        lets = []
        for offset in offsets:
            shuffled = _warp_call("shuffle_down", dtype, mask, value, const(offset), const(width))
            var = self.new_var(name, dtype)
            lets.append((var, _COMBINE[kind](value, shuffled)))
            value = var
        return lets, value

    def single_warp(self, kind, dtype, start, dest, size):
        mask = self.new_var("mask", "uint32")
        v0 = self.new_var("red", dtype)
        offsets = [size >> k for k in range(1, size.bit_length())]
        lets, last = self.fold(kind, dtype, v0, mask, offsets, size, "red")
        result = self.new_var("red_result", dtype)
        lets.append((result, _warp_call("shuffle", dtype, mask, last, const(0), const(size))))
        body = self.store_dest(dest, result)
        for var, val in reversed([(mask, _warp_call("activemask", "uint32")), (v0, start), *lets]):
            body = LetStmt(var, val, body)
        return body

    def multi_warp(self, kind, dtype, start, dest, size, group_tags, extents):
        warp = self.warp_size
        tx = self.scope["threadIdx.x"][0]
        nwarps = size // warp
        g, groups = self.linear(group_tags, extents)
        buf = decl_buffer((groups * nwarps,), dtype, f"red_buf_{self.count}", scope="shared")
        base = g * nwarps if groups > 1 else const(0)
        mask = self.new_var("mask", "uint32")
        v0 = self.new_var("red", dtype)
        lane, warp_id = tx % warp, tx // warp
        offsets = [warp >> k for k in range(1, warp.bit_length())]
        lets1, partial = self.fold(kind, dtype, v0, mask, offsets, warp, "red")
        w0 = self.new_var("red_warp", dtype)
        span = _pow2_ceil(nwarps)
        lets2, last = self.fold(kind, dtype, w0, mask, [span >> k for k in range(1, span.bit_length())],
                                warp, "red_warp")
        result = self.new_var("red_result", dtype)
        lets2.append((result, _warp_call("shuffle", dtype, mask, last, const(0), const(warp))))
        tail = SeqStmt((self.store_dest(dest, result), storage_sync()))
        first = if_then_else(lane < nwarps, buf[(base + lane,)], identity(kind, dtype))
        for var, val in reversed([(w0, first), *lets2]):
            tail = LetStmt(var, val, tail)
        store = IfThenElse(convert(lane == 0), BufferStore(buf, partial, (base + warp_id,)))
        stmts = SeqStmt((store, storage_sync(), tail))
        body = Allocate(buf.data, dtype, (const(groups * nwarps),), const(True), stmts, "shared")
        for var, val in reversed([(mask, _warp_call("activemask", "uint32")), (v0, start), *lets1]):
            body = LetStmt(var, val, body)
        return body


def _is_true(expr) -> bool:
    return isinstance(expr, IntImm) and expr.value != 0


def lower_thread_allreduce(func: PrimFunc, warp_size: int = 1) -> PrimFunc:
    """`func` with every `tvm_thread_allreduce` lowered (shuffles when `warp_size` > 1)."""
    if not kernel_roots(func.body):
        return func
    name = func.attrs.get("global_symbol", "the function")
    body = _Lower(warp_size, name).visit_stmt(func.body)
    return func if body is func.body else func.with_body(body)


@prim_func_pass(opt_level=0, name="LowerThreadAllreduce")
class LowerThreadAllreduce:
    """Lower `tvm_thread_allreduce` to a shared-memory tree or (warp_size > 1) warp shuffles."""

    def __init__(self, warp_size: int = 1):
        self.warp_size = warp_size

    def transform_function(self, func, mod, ctx):
        return lower_thread_allreduce(func, self.warp_size)


__all__ = ["LowerThreadAllreduce", "identity", "lower_thread_allreduce"]
