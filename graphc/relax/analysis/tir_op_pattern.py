"""The fusion pattern of a TensorIR function, derived from its blocks (TVM's AnalyzeOpPatternKind).

Every block is classified from its one BufferStore and the BufferLoads in its body:

- elementwise: each load reads at exactly the store's indices (`C[i, j] = A[i, j] + B[j]`
  counts as elementwise when one load matches exactly and the others broadcast);
- broadcast: each load's indices appear among the store's, in order (`C[i, j] = B[j]`);
- injective: the store indexes with plain variables and the loads use only those
  (`B[i, j] = A[j, i]`, `B[i] = A[i // 4, i % 4]`);
- otherwise, a block with reduce iterators is a reduction: out-elementwise-fusable when its
  body is a multiply-accumulate (matmul, convolution) or a load indexes with more than a
  bare reduce variable (pooling), else a plain commutative reduction;
- anything else (no store, several stores to different places, no reduce axis) is opaque.

The function's pattern is the largest over its blocks, except that an elementwise-like
output block after a reduction makes the function out-elementwise-fusable (softmax:
reduce, then normalize). A function without blocks is opaque (TVM would call it
elementwise, which FuseTIR could not honour).

>>> from graphc.script import from_source
>>> f = from_source('''
... @T.prim_func
... def transpose(A: T.Buffer((4, 8), "float32"), B: T.Buffer((8, 4), "float32")):
...     for i, j in T.grid(8, 4):
...         with T.block("B"):
...             vi, vj = T.axis.remap("SS", [i, j])
...             B[vi, vj] = A[vj, vi]
... ''')
>>> analyze_op_pattern_kind(f)
<OpPatternKind.kInjective: 2>
"""

from __future__ import annotations

import dataclasses

from ...tir.analysis.var_use import used_vars
from ...tir.buffer import Buffer
from ...tir.expr import Add, BufferLoad, Cast, IntImm, Mul, PrimExpr, Var
from ...tir.function import PrimFunc
from ...tir.functor import StmtExprVisitor, post_order_visit
from ...tir.stmt import Block, BlockRealize, BufferStore, IterType
from ..op.registry import OpPatternKind

__all__ = ["analyze_op_pattern_kind"]

K = OpPatternKind


def analyze_op_pattern_kind(func: PrimFunc) -> OpPatternKind:
    """The OpPatternKind of `func` (see the module docstring for the rules)."""
    if not _has_blocks(func.body):
        return K.kOpaque
    analyzer = _PatternAnalyzer(func)
    analyzer.visit_stmt(func.body)
    return analyzer.kind


def _has_blocks(stmt) -> bool:
    found = []

    def visit(node):
        if isinstance(node, Block) and node.name_hint != "root":
            found.append(node)

    post_order_visit(stmt, visit)
    return bool(found)


# --- index comparisons -----------------------------------------------------------------------


def same_expr(a, b) -> bool:
    """Exact equality of index expressions: variables by identity, constants by value.

    (TVM compares object identity; comparing constants by value keeps the answer stable
    across a print/parse round trip.)
    """
    if a is b:
        return True
    if type(a) is not type(b) or isinstance(a, Var):
        return False
    if isinstance(a, PrimExpr | Buffer) or dataclasses.is_dataclass(a):
        return all(same_expr(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a))
    if isinstance(a, tuple | list):
        return len(a) == len(b) and all(same_expr(x, y) for x, y in zip(a, b))
    return a == b


def _same_indices(lhs, rhs) -> bool:
    return len(lhs) == len(rhs) and all(same_expr(a, b) for a, b in zip(lhs, rhs))


def _is_const(expr, value: int) -> bool:
    return isinstance(expr, IntImm) and expr.value == value


def _is_elemwise(store: BufferStore, load: BufferLoad) -> bool:
    return _same_indices(store.indices, load.indices)


def _is_broadcast(store: BufferStore, load: BufferLoad) -> bool:
    """Every load index (except unit dims read at 0) is found among the store indices, in order."""
    j, n_store = 0, len(store.buffer.shape)
    for i, index in enumerate(load.indices):
        if i < len(load.buffer.shape) and _is_const(load.buffer.shape[i], 1) and _is_const(index, 0):
            continue
        while j < n_store and not same_expr(store.indices[j], index):
            j += 1
        if j == n_store:
            return False
    return True


def _store_vars(store: BufferStore) -> set | None:
    if not all(isinstance(i, Var) for i in store.indices):
        return None
    return set(store.indices)


def _is_injective(store: BufferStore, load: BufferLoad) -> bool:
    """The store indexes with bare variables and the load uses no other variable."""
    store_vars = _store_vars(store)
    if store_vars is None:
        return False
    return all(v in store_vars for index in load.indices for v in used_vars(index))


def _allows_reuse(store: BufferStore, load: BufferLoad) -> bool:
    """Some store variable is absent from the load's indices (the load is reused across it)."""
    store_vars = _store_vars(store)
    if store_vars is None:
        return False
    for index in load.indices:
        store_vars.difference_update(used_vars(index))
    return bool(store_vars)


def _strip_cast(expr):
    while isinstance(expr, Cast):
        expr = expr.value
    return expr


def _is_fma(body) -> bool:
    """`C[...] = C[...] + A[...] * B[...]` (casts allowed), with A and B each reused."""
    if not isinstance(body, BufferStore):
        return False
    add = _strip_cast(body.value)
    if not isinstance(add, Add):
        return False
    mul = _strip_cast(add.b)
    acc = _strip_cast(add.a)
    if not isinstance(mul, Mul) or not isinstance(acc, BufferLoad):
        return False
    if acc.buffer is not body.buffer or not _same_indices(body.indices, acc.indices):
        return False
    lhs, rhs = _strip_cast(mul.a), _strip_cast(mul.b)
    if not isinstance(lhs, BufferLoad) or not isinstance(rhs, BufferLoad):
        return False
    return _allows_reuse(body, lhs) and _allows_reuse(body, rhs)


def _is_pure_reduce(reduce_vars: list, indices) -> bool:
    """Every index that mentions a reduce variable is exactly that variable."""
    for index in indices:
        used = [v for v in used_vars(index) if any(v is r for r in reduce_vars)]
        if used and not any(index is r for r in reduce_vars):
            return False
    return True


class _PatternAnalyzer(StmtExprVisitor):
    def __init__(self, func: PrimFunc):
        self.param_buffers = {id(b) for b in func.buffer_map.values()}
        self.kind = K.kElemWise
        self.store: BufferStore | None = None
        self.loads: list[BufferLoad] = []

    def visit_BufferStore(self, op: BufferStore):
        # One store per block (what TE computes make); a second one elsewhere is opaque.
        if self.store is not None and not _same_indices(op.indices, self.store.indices):
            self.kind = K.kOpaque
            return
        self.store = op
        super().visit_BufferStore(op)

    def visit_BufferLoad(self, op: BufferLoad):
        self.loads.append(op)
        super().visit_BufferLoad(op)

    def visit_BlockRealize(self, op: BlockRealize):
        self.visit_stmt(op.block)

    def visit_Block(self, op: Block):
        if op.name_hint == "root":
            self.visit_stmt(op.body)
            return
        self.loads, self.store = [], None
        self.visit_stmt(op.body)
        if self.store is None:
            self.kind = K.kOpaque
            return
        store = self.store
        index_kind, has_elemwise = K.kElemWise, False
        for load in self.loads:
            if _is_elemwise(store, load):
                has_elemwise = True
            elif _is_broadcast(store, load):
                index_kind = max(index_kind, K.kBroadcast)
            elif _is_injective(store, load):
                index_kind = max(index_kind, K.kInjective)
            else:
                index_kind = K.kOpaque
                break
        if index_kind == K.kBroadcast and has_elemwise:
            index_kind = K.kElemWise  # C[i, j] = A[i, j] + B[j]
        if index_kind != K.kOpaque:
            if self._is_output_block(op) and self.kind == K.kCommReduce:
                self.kind = K.kOutEWiseFusable  # reduce, then an epilogue (softmax)
            else:
                self.kind = max(self.kind, index_kind)
            return
        reduce_vars = [iv.var for iv in op.iter_vars if iv.iter_type == IterType.COMM_REDUCE]
        if not reduce_vars:
            self.kind = K.kOpaque
            return
        if _is_fma(op.body):
            self.kind = max(self.kind, K.kOutEWiseFusable)  # matmul, convolution
            return
        if any(not _is_pure_reduce(reduce_vars, load.indices) for load in self.loads):
            self.kind = max(self.kind, K.kOutEWiseFusable)  # pooling
            return
        self.kind = max(self.kind, K.kCommReduce)

    def _is_output_block(self, block: Block) -> bool:
        return any(id(region.buffer) in self.param_buffers for region in block.writes)
