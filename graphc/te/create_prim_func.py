"""`create_prim_func`: turn a TE graph into a PrimFunc in block form (docs/ir_conventions.md).

Each argument tensor becomes a buffer parameter (scalar `te.var` arguments become scalar
parameters); each compute op becomes one block nested in loops named after its axes;
computed tensors that are not arguments become the root block's `alloc_buffers`.

>>> from graphc import te
>>> A = te.placeholder((8,), name="A")
>>> B = te.compute((8,), lambda *i: A(*i) + 1.0, name="B")
>>> func = te.create_prim_func([A, B])
>>> [b.name for b in func.buffers], func.attrs["global_symbol"]
(['A', 'B'], 'main')
"""

from __future__ import annotations

from ..errors import TIRError
from ..ir.dtype import DataType
from ..tir import expr as tir_expr
from ..tir.analysis.block_access import get_block_read_write_region
from ..tir.analysis.var_use import VarCollector
from ..tir.buffer import Buffer, buffer_load, decl_buffer
from ..tir.expr import IntImm, PrimExpr, Range, Var
from ..tir.function import PrimFunc
from ..tir.functor import StmtExprMutator, substitute
from ..tir.generic import BINARY_BUILDERS
from ..tir.stmt import (
    Block,
    BlockRealize,
    BufferStore,
    For,
    ForKind,
    IfThenElse,
    IterType,
    IterVar,
    LetStmt,
    SeqStmt,
)  # fmt: skip
from .reduce import Reduce
from .tensor import ComputeOp, PlaceholderOp, ProducerLoad, Tensor


class _ToTIR(StmtExprMutator):
    """Replace TE axis vars by block vars and tensor reads by buffer loads."""

    def __init__(self, vmap: dict, buffers: dict, index_dtype: str | None):
        self.vmap, self.buffers, self.index_dtype = vmap, buffers, index_dtype

    def visit_Var(self, op):
        return self.vmap.get(op, op)

    def visit_BinaryOp(self, op):
        a, b = self.visit_expr(op.a), self.visit_expr(op.b)
        if a is op.a and b is op.b:
            return op
        build = BINARY_BUILDERS.get(type(op))
        return build(a, b) if build is not None else op.replace(a=a, b=b)

    def visit_CmpOp(self, op):
        a, b = self.visit_expr(op.a), self.visit_expr(op.b)
        return op if a is op.a and b is op.b else tir_expr._compare(type(op), a, b)

    def visit_Select(self, op):
        c, t, f = (
            self.visit_expr(op.condition),
            self.visit_expr(op.true_value),
            self.visit_expr(op.false_value),
        )
        if c is op.condition and t is op.true_value and f is op.false_value:
            return op
        return tir_expr.select(c, t, f)

    def visit_ProducerLoad(self, op: ProducerLoad):
        indices = [self.visit_expr(i) for i in op.indices]
        if self.index_dtype is not None:
            indices = [tir_expr.cast(i, self.index_dtype) for i in indices]
        return buffer_load(self.buffers[op.producer], indices)

    def visit_Reduce(self, op):
        raise TIRError("a reduction may only be the whole body of a te.compute")


def _ordered_ops(roots: list) -> list:
    """Compute and placeholder ops reachable from `roots`, producers before consumers."""
    order, seen = [], set()
    for root in roots:
        stack = [(root.op, False)]
        while stack:
            op, expanded = stack.pop()
            if expanded:
                order.append(op)
                continue
            if id(op) in seen:
                continue
            seen.add(id(op))
            stack.append((op, True))
            for t in reversed(op.input_tensors):
                if id(t.op) not in seen:
                    stack.append((t.op, False))
    return order


class _TEVarCollector(VarCollector):
    """`VarCollector` that also walks into te's loads and reductions."""

    def visit_ProducerLoad(self, op):
        for i in op.indices:
            self.visit_expr(i)

    def visit_Reduce(self, op):
        for e in op.source:
            self.visit_expr(e)
        self.visit_expr(op.condition)
        for iv in op.axis:
            self.visit_expr(iv.dom.min)
            self.visit_expr(iv.dom.extent)


def _used_vars(exprs) -> list:
    """The Vars `exprs` (te expressions included) use, in order of first use."""
    return _TEVarCollector().collect(exprs)


def _retyped_vars(ops: list, args: list, dtype: str | None) -> dict:
    """Integer shape/scalar Vars of another dtype mapped to same-named Vars of `dtype`."""
    if dtype is None:
        return {}
    exprs = [d for op in ops for t in op.outputs for d in t.shape]
    exprs += [
        e
        for op in ops
        if isinstance(op, ComputeOp)
        for iv in op.reduce_axis
        for e in (iv.dom.min, iv.dom.extent)
    ]
    exprs += [a for a in args if isinstance(a, Var)]
    vmap = {}
    for v in _used_vars(exprs):
        if v.dtype != dtype and DataType(v.dtype).is_integer:
            vmap[v] = type(v)(v.name, dtype) if type(v) in (Var, tir_expr.SizeVar) else v
    return {k: v for k, v in vmap.items() if v is not k}


class _Builder:
    def __init__(self, index_dtype: str | None, var_map: dict):
        self.index_dtype = index_dtype
        self.var_map = var_map
        self.buffers: dict = {}

    def index(self, e: PrimExpr) -> PrimExpr:
        """`e` in the index dtype, with retyped shape variables."""
        if self.index_dtype is None:
            return e
        return tir_expr.cast(substitute(e, self.var_map), self.index_dtype)

    def buffer(self, tensor: Tensor) -> Buffer:
        if tensor not in self.buffers:
            shape = tuple(self.index(d) for d in tensor.shape)
            self.buffers[tensor] = decl_buffer(shape, tensor.dtype, tensor.name)
        return self.buffers[tensor]

    def _iter(self, iv: IterVar, kind: IterType):
        dom = Range(self.index(iv.dom.min), self.index(iv.dom.extent))
        dtype = dom.extent.dtype
        loop_var = Var(iv.var.name, dtype)
        block_var = Var(f"v_{iv.var.name}", dtype)
        return loop_var, IterVar(dom, block_var, kind)

    def compute_stmt(self, op: ComputeOp):
        loops, iter_vars = [], []
        for iv in op.axis:
            loops.append(self._iter(iv, IterType.DATA_PAR))
        for iv in op.reduce_axis:
            loops.append(self._iter(iv, IterType.COMM_REDUCE))
        iter_vars = [biv for _, biv in loops]
        vmap = dict(self.var_map)
        vmap.update({iv.var: biv.var for iv, biv in zip(op.axis + op.reduce_axis, iter_vars)})
        to_tir = _ToTIR(vmap, self.buffers, self.index_dtype)
        out_bufs = [self.buffer(op.output(i)) for i in range(op.num_outputs)]
        indices = tuple(biv.var for biv in iter_vars[: len(op.axis)])
        init = None
        if isinstance(op.body[0], Reduce):
            body, init = self._reduce(op.body[0], out_bufs, indices, to_tir)
        else:
            body = SeqStmt.flatten(
                [
                    BufferStore(b, tir_expr.cast(to_tir.visit_expr(e), b.dtype), indices)
                    for b, e in zip(out_bufs, op.body)
                ]
            )
        block = Block(tuple(iter_vars), (), (), op.name, body, init, annotations=dict(op.attrs))
        reads, writes = get_block_read_write_region(block)
        block = block.replace(reads=reads, writes=writes)
        stmt = BlockRealize(tuple(lv for lv, _ in loops), tir_expr.const(True), block)
        for loop_var, biv in reversed(loops):
            stmt = For(loop_var, biv.dom.min, biv.dom.extent, ForKind.SERIAL, stmt)
        return stmt

    def _reduce(self, reduce: Reduce, bufs: list, indices: tuple, to_tir: _ToTIR):
        combiner = reduce.combiner
        lhs = [buffer_load(b, indices) for b in bufs]
        rhs = [to_tir.visit_expr(s) for s in reduce.source]
        # Rebuild the combiner through the typed builders: the index dtype may have changed.
        bind = dict(zip(combiner.lhs, lhs))
        bind.update(zip(combiner.rhs, rhs))
        combine = _ToTIR(bind, self.buffers, None)
        values = [tir_expr.cast(combine.visit_expr(r), b.dtype) for r, b in zip(combiner.result, bufs)]
        starts = reduce.init or combiner.identity_element
        init = SeqStmt.flatten([BufferStore(b, tir_expr.cast(v, b.dtype), indices) for b, v in zip(bufs,
                                                                                                   starts)])
        if len(bufs) == 1:
            body = BufferStore(bufs[0], values[0], indices)
        else:
            # Combine every value before storing any: each combined value reads all accumulators.
            temps = [Var(f"v_{b.name}", b.dtype) for b in bufs]
            body = SeqStmt.flatten([BufferStore(b, t, indices) for b, t in zip(bufs, temps)])
            for t, v in reversed(list(zip(temps, values))):
                body = LetStmt(t, v, body)
        condition = to_tir.visit_expr(reduce.condition)
        if not (isinstance(condition, IntImm) and condition.value):
            body = IfThenElse(condition, body)
        return body, init


def _check_args(args: list) -> None:
    for i, a in enumerate(args):
        if not isinstance(a, Tensor | Var):
            raise TIRError(
                f"create_prim_func: argument {i} must be a te Tensor or a scalar te.var, "
                f"got {type(a).__name__}"
            )
        if any(b is a for b in args[:i]):
            name = a.name
            raise TIRError(f"create_prim_func: argument {name} appears more than once in the argument list")


def create_prim_func(ops, index_dtype_override: str | None = None) -> PrimFunc:
    """A PrimFunc computing the tensors in `ops` (the argument list: inputs, outputs, scalars).

    `index_dtype_override` ("int64") gives every shape, loop and block variable that dtype.

    >>> from graphc import te
    >>> A = te.placeholder((4, 8), name="A")
    >>> k = te.reduce_axis((0, 8), name="k")
    >>> B = te.compute((4,), lambda i: te.sum(A[i, k], axis=k), name="B")
    >>> func = create_prim_func([A, B], index_dtype_override="int64")
    >>> block = func.body.block.body.body.body.block
    >>> block.name_hint, [iv.var.name for iv in block.iter_vars], block.iter_vars[0].var.dtype
    ('B', ['v_i', 'v_k'], 'int64')
    """
    args = list(ops) if isinstance(ops, list | tuple) else [ops]
    _check_args(args)
    index_dtype = index_dtype_override
    if index_dtype is not None and not DataType(index_dtype).is_integer:
        raise TIRError(f"index_dtype_override must be an integer dtype, got {index_dtype}")
    tensors = [a for a in args if isinstance(a, Tensor)]
    arg_ids = {id(t) for t in tensors}
    order = _ordered_ops(tensors)
    _check_placeholders(order, arg_ids)
    _check_defined(order, args)
    builder = _Builder(index_dtype, _retyped_vars(order, args, index_dtype))
    params, buffer_map = [], {}
    for a in args:
        if isinstance(a, Tensor):
            handle = Var(f"var_{a.name}", "handle")
            params.append(handle)
            buffer_map[handle] = builder.buffer(a)
        else:
            params.append(builder.var_map.get(a, a))
    stmts = [builder.compute_stmt(op) for op in order if isinstance(op, ComputeOp)]
    intermediates = tuple(b for t, b in builder.buffers.items() if id(t) not in arg_ids)
    root = Block((), (), (), "root", SeqStmt.flatten(stmts), None, intermediates)
    body = BlockRealize((), tir_expr.const(True), root)
    return PrimFunc(params, body, None, buffer_map, {"global_symbol": "main", "tir.noalias": True})


def _check_placeholders(order: list, arg_ids: set) -> None:
    for op in order:
        if isinstance(op, PlaceholderOp) and id(op.output(0)) not in arg_ids:
            users = [o.name for o in order if any(t.op is op for t in o.input_tensors)]
            raise TIRError(
                f"create_prim_func: placeholder {op.name} is read by {', '.join(users)} but is not in "
                "the argument list; pass it in the list of tensors"
            )


def _check_defined(order: list, args: list) -> None:
    defined = {id(a) for a in args if isinstance(a, Var)}
    for t in args:
        if isinstance(t, Tensor):
            defined.update(id(v) for v in _used_vars(t.shape))
    for op in order:
        if isinstance(op, PlaceholderOp):
            continue
        bound = {id(iv.var) for iv in op.axis + op.reduce_axis}
        exprs = list(op.body) + [d for t in op.outputs for d in t.shape]
        for v in _used_vars(exprs):
            if id(v) not in bound and id(v) not in defined:
                raise TIRError(
                    f"create_prim_func: variable {v.name} used by {op.name} appears in no argument's shape; "
                    f"add it to the argument list (te.create_prim_func([..., {v.name}]))"
                )


__all__ = ["create_prim_func"]
