"""Inlining: fold an elementwise producer into its consumers, or a consumer into its producer.

`compute_inline(B)` where B is `B[v0, v1] = f(A[...])` replaces every load `B[e0, e1]`
with `f` under `v0 -> e0, v1 -> e1`, then removes B's block, the loops that only ran it,
and B's allocation. `reverse_compute_inline(C)` where C is `C[g(v)] = h(B[v0, v1])` and
B's only producer stores `B[u0, u1] = e` rewrites that store into `C[g(u)] = h(e)`.

>>> from graphc import tir
>>> from graphc.script import from_source
>>> f = from_source('''
... @T.prim_func
... def main(A: T.Buffer((4,), "float32"), C: T.Buffer((4,), "float32")):
...     B = T.alloc_buffer((4,), "float32")
...     for i in range(4):
...         with T.block("B"):
...             vi = T.axis.spatial(4, i)
...             B[vi] = A[vi] * 2.0
...     for i in range(4):
...         with T.block("C"):
...             vi = T.axis.spatial(4, i)
...             C[vi] = B[vi] + 1.0
... ''')
>>> sch = tir.Schedule(f)
>>> sch.compute_inline(sch.get_block("B"))
>>> [b.name for b in sch.get_child_blocks(sch.get_block("root"))]
['C']
"""

from __future__ import annotations

from ...errors import ScheduleError
from ..analysis.block_access import get_block_read_write_region
from ..analysis.var_use import used_vars
from ..expr import IntImm, Var
from ..functor import StmtExprMutator, StmtExprVisitor, substitute
from ..stmt import Block, BlockRealize, BufferStore, IterType
from .loops import _provably_equal
from .state import (
    enclosing_block,
    find_block_path,
    removal_root,
    replace_stmts,
    scope_realizes,
    simplify,
    walk,
)  # fmt: skip


def _single_store(block: Block, role: str) -> BufferStore:
    if block.init is not None or any(iv.iter_type != IterType.DATA_PAR for iv in block.iter_vars):
        raise ScheduleError(
            f"cannot inline block {block.name_hint!r}: it is a reduction (it has reduce iters or an "
            f"init); only spatial blocks ({role}) can be inlined"
        )
    if not isinstance(block.body, BufferStore):
        raise ScheduleError(
            f"cannot inline block {block.name_hint!r}: its body must be a single BufferStore, found "
            f"{type(block.body).__name__}"
        )
    if block.match_buffers or block.alloc_buffers:
        raise ScheduleError(f"cannot inline block {block.name_hint!r}: it allocates or matches buffers")
    return block.body


def _loads_of(stmt, buffer) -> list:
    loads: list = []

    class _L(StmtExprVisitor):
        def visit_BufferLoad(self, op):
            if op.buffer is buffer:
                loads.append(op)
            super().visit_BufferLoad(op)

    _L().visit_stmt(stmt)
    return loads


def _writers(root, buffer) -> list:
    return [s for s in walk(root) if isinstance(s, BufferStore) and s.buffer is buffer]


def _is_param(func, buffer) -> bool:
    return any(b is buffer for b in func.buffer_map.values())


def _drop_alloc(root, buffer):
    """`root` with `buffer` removed from whichever block allocates it."""
    for s in walk(root):
        if isinstance(s, Block) and any(b is buffer for b in s.alloc_buffers):
            new = s.replace(alloc_buffers=tuple(b for b in s.alloc_buffers if b is not buffer))
            return replace_stmts(root, {s: new})
    return root


def _refresh_reads(root, changed_names: set, buffer=None):
    """Recompute the read regions of the blocks named in `changed_names`, and of the blocks that
    still declare a read of the inlined `buffer` (outer blocks, e.g. made by blockize); inner
    blocks first, so that an outer block's regions see its inner blocks' new ones."""
    from ..functor import StmtMutator

    class _Refresh(StmtMutator):
        def visit_Block(self, op):
            out = super().visit_Block(op)
            stale = buffer is not None and any(r.buffer is buffer for r in op.reads)
            if op.name_hint in changed_names or stale:
                reads, writes = get_block_read_write_region(out)
                out = out.replace(reads=reads, writes=writes if not out.writes else out.writes)
            return out

    return _Refresh().visit_stmt(root)


def compute_inline(func, func_name: str, name: str):
    """Inline block `name` into its consumers; returns the new PrimFunc."""
    path = find_block_path(func.body, name)
    if path is None or len(path) == 1:
        raise ScheduleError(f"cannot inline block {name!r}: it is the root block or does not exist")
    block = path[-1].block
    store = _single_store(block, "producers computing one element per instance")
    buf = store.buffer
    if _is_param(func, buf):
        raise ScheduleError(
            f"cannot inline block {name!r}: it writes {buf.name}, an output of the function; only "
            f"blocks writing intermediate buffers can be inlined"
        )
    iter_vars = [iv.var for iv in block.iter_vars]
    if not all(isinstance(x, Var) and x in iter_vars for x in store.indices) or len(
        {id(x) for x in store.indices}
    ) != len(store.indices):
        raise ScheduleError(
            f"cannot inline block {name!r}: its store {buf.name}[...] must be indexed by distinct block "
            f"iter vars (found other index expressions)"
        )
    if not set(used_vars(store.value)) <= (set(store.indices) | _free_vars(func)):
        raise ScheduleError(
            f"cannot inline block {name!r}: its value uses block iters that do not index {buf.name}"
        )
    if _loads_of(block.body, buf):
        raise ScheduleError(f"cannot inline block {name!r}: it reads its own output {buf.name}")
    if len(_writers(func.body, buf)) != 1:
        raise ScheduleError(f"cannot inline block {name!r}: {buf.name} is written by more than one store")
    if not _is_true(path[-1].predicate):
        raise ScheduleError(f"cannot inline block {name!r}: it has a predicate (T.where)")
    for s in walk(func.body):
        if isinstance(s, Block) and any(m.source.buffer is buf for m in s.match_buffers):
            raise ScheduleError(
                f"cannot inline block {name!r}: {buf.name} is matched by block {s.name_hint!r}"
            )

    changed: set = set()

    class _Inline(StmtExprMutator):
        def __init__(self):
            self.current = [""]

        def visit_Block(self, op):
            self.current.append(op.name_hint)
            try:
                return super().visit_Block(op)
            finally:
                self.current.pop()

        def visit_BufferLoad(self, op):
            if op.buffer is not buf:
                return super().visit_BufferLoad(op)
            changed.add(self.current[-1])
            indices = [simplify(self.visit_expr(i)) for i in op.indices]
            return substitute(store.value, dict(zip(store.indices, indices)))

    body = replace_stmts(func.body, {removal_root(path): None})
    body = _Inline().visit_stmt(body)
    body = _drop_alloc(body, buf)
    body = _refresh_reads(body, changed, buf)
    return func.with_body(body)


def _is_true(e) -> bool:
    return isinstance(e, IntImm) and e.value == 1


def _free_vars(func) -> set:
    """Function-level variables (scalar params and symbolic shape dims)."""
    return set(func.params) | set(used_vars(*(d for b in func.buffer_map.values() for d in b.shape)))


def reverse_compute_inline(func, func_name: str, name: str):
    """Inline consumer block `name` into the single producer of the buffer it reads."""
    path = find_block_path(func.body, name)
    if path is None or len(path) == 1:
        raise ScheduleError(f"cannot reverse-inline block {name!r}: it is the root block or does not exist")
    block = path[-1].block
    store = _single_store(block, "consumers computing one element per instance")
    if not _is_true(path[-1].predicate):
        raise ScheduleError(f"cannot reverse-inline block {name!r}: it has a predicate (T.where)")
    scope = enclosing_block(path)
    candidates = {}
    for load in _all_loads(store.value):
        candidates.setdefault(load.buffer, []).append(load)
    intermediates = [b for b in candidates if not _is_param(func, b) and _writers(func.body, b)]
    if len(intermediates) != 1:
        raise ScheduleError(
            f"cannot reverse-inline block {name!r}: it must read exactly one intermediate buffer written "
            f"by a producer block, found {len(intermediates)}"
        )
    buf = intermediates[0]
    loads = candidates[buf]
    if len(loads) != 1 or not all(isinstance(x, Var) for x in loads[0].indices):
        raise ScheduleError(
            f"cannot reverse-inline block {name!r}: it must load {buf.name} once, indexed by distinct "
            f"block iter vars"
        )
    load = loads[0]
    iter_vars = [iv.var for iv in block.iter_vars]
    if len({id(x) for x in load.indices}) != len(load.indices) or set(iter_vars) - set(load.indices):
        raise ScheduleError(
            f"cannot reverse-inline block {name!r}: the indices of {buf.name} must be a permutation of "
            f"the block's iter vars"
        )
    writer_realizes = [r for r in scope_realizes(scope) if _writers(r.block, buf)]
    if len(writer_realizes) != 1:
        raise ScheduleError(f"cannot reverse-inline block {name!r}: {buf.name} must have one producer block")
    prod_realize = writer_realizes[0]
    producer = prod_realize.block
    if producer.init is not None or any(iv.iter_type != IterType.DATA_PAR for iv in producer.iter_vars):
        raise ScheduleError(
            f"cannot reverse-inline block {name!r}: its producer {producer.name_hint!r} is a reduction; "
            f"only a spatial producer can absorb a consumer"
        )
    pstore = _single_store(producer, "producers computing one element per instance")
    if len(_loads_of(func.body, buf)) != 1:
        raise ScheduleError(
            f"cannot reverse-inline block {name!r}: {buf.name} is also read elsewhere; the consumer must "
            f"be its only reader"
        )
    if pstore.buffer is not buf or not all(isinstance(x, Var) for x in pstore.indices):
        raise ScheduleError(
            f"cannot reverse-inline block {name!r}: producer {producer.name_hint!r} must store "
            f"{buf.name} at distinct iter vars"
        )
    doms = {iv.var: iv.dom for iv in block.iter_vars}
    pdoms = {iv.var: iv.dom for iv in producer.iter_vars}
    for cv, pv in zip(load.indices, pstore.indices):
        same = _provably_equal(doms[cv].min, pdoms[pv].min)
        if not (same and _provably_equal(doms[cv].extent, pdoms[pv].extent)):
            raise ScheduleError(
                f"cannot reverse-inline block {name!r}: it does not consume every element of {buf.name} "
                f"that {producer.name_hint!r} produces"
            )
    vmap = dict(zip(load.indices, pstore.indices))

    class _Swap(StmtExprMutator):
        def visit_BufferLoad(self, op):
            return pstore.value if op is load else super().visit_BufferLoad(op)

    value = substitute(_Swap().visit_expr(store.value), vmap)
    indices = tuple(simplify(substitute(i, vmap)) for i in store.indices)
    new_store = BufferStore(store.buffer, value, indices)
    reads, writes = get_block_read_write_region(producer.replace(body=new_store))
    new_producer = producer.replace(body=new_store, reads=reads, writes=writes)
    body = replace_stmts(func.body, {removal_root(path): None, producer: new_producer})
    body = _drop_alloc(body, buf)
    return func.with_body(body)


def _all_loads(expr) -> list:
    loads: list = []

    class _L(StmtExprVisitor):
        def visit_BufferLoad(self, op):
            loads.append(op)
            super().visit_BufferLoad(op)

    _L().visit_expr(expr)
    return loads


__all__ = ["compute_inline", "reverse_compute_inline", "BlockRealize"]
