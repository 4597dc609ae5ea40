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
from ..expr import IntImm, PrimExpr, Var
from ..functor import StmtExprMutator, StmtExprVisitor, substitute
from ..stmt import Block, BlockRealize, BufferStore, IfThenElse, IterType
from .state import (
    enclosing_block,
    find_block_path,
    removal_root,
    replace_stmts,
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


def _opaque_use(func, buf) -> str | None:
    """Where `buf` is used other than by loads and stores: its data pointer, or a match_buffer."""
    for s in walk(func.body):
        if isinstance(s, Block) and any(m.source.buffer is buf for m in s.match_buffers):
            return f"{buf.name} is matched by block {s.name_hint!r}"
    found: list = []

    class _Data(StmtExprVisitor):
        def visit_Var(self, op):
            if op is buf.data:
                found.append(op)

    _Data().visit_stmt(func.body)
    if found:
        return f"{buf.name}'s data pointer is used directly (an opaque access)"
    return None


def compute_inline(func, func_name: str, name: str):
    """Inline block `name` into its consumers; returns the new PrimFunc."""
    from .blocks import access
    from .scope import check_complete, check_stage_pipeline, is_output_block, mark_stage_pipeline, root_block

    what = f"compute_inline block {name!r}"
    path = find_block_path(func.body, name)
    if path is None or len(path) == 1:
        raise ScheduleError(f"cannot inline block {name!r}: it is the root block or does not exist")
    block = path[-1].block
    if block.init is not None:
        raise ScheduleError(f"cannot {what}: the block has an init (T.init()), it is a reduction")
    writes = access(block)[1]
    if len(writes) != 1:
        raise ScheduleError(
            f"cannot {what}: the block must write exactly one buffer region, it writes {len(writes)}"
        )
    store = _single_store(block, "producers computing one element per instance")
    buf = store.buffer
    if _is_param(func, buf):
        raise ScheduleError(
            f"cannot inline block {name!r}: it writes {buf.name}, an output of the function; only "
            f"blocks writing intermediate buffers can be inlined"
        )
    check_stage_pipeline(func, path, what)
    if is_output_block(path):
        raise ScheduleError(
            f"cannot {what}: it is an output block of its scope ({buf.name} is not allocated by the "
            f"scope block {enclosing_block(path).name_hint!r})"
        )
    check_complete(path, what)
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
    opaque = _opaque_use(func, buf)
    if opaque:
        raise ScheduleError(f"cannot {what}: {opaque}")

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
    new_func = func.with_body(body)
    if enclosing_block(path) is root_block(func):  # a stage pipeline (checked above) stays one
        mark_stage_pipeline(root_block(new_func))
    return new_func


def _is_true(e) -> bool:
    return isinstance(e, IntImm) and e.value == 1


def _free_vars(func) -> set:
    """Function-level variables (scalar params and symbolic shape dims)."""
    return set(func.params) | set(used_vars(*(d for b in func.buffer_map.values() for d in b.shape)))


def reverse_compute_inline(func, func_name: str, name: str):
    """Inline consumer block `name` into the single producer of the buffer it reads.

    The consumer `C[g(v)] = h(B[f(v)], ...)` may load B several times (at the same indices),
    at any indices `f` that are a bijective affine map of its iters (a permutation, a reshape
    by `//` and `%`, an offset), and need not consume every element B's producer writes: the
    producer `B[p(u)] = e(u)` becomes `C[g(f^-1(p(u)))] = h(e(u), ...)` under a predicate
    that keeps `f^-1(p(u))` inside C's iter domains.
    """
    from ..arith import Analyzer
    from .affine import detect_bijective, inverse
    from .scope import check_complete, check_stage_pipeline, dependences, writers_of

    what = f"reverse_compute_inline block {name!r}"
    path = find_block_path(func.body, name)
    if path is None or len(path) == 1:
        raise ScheduleError(f"cannot reverse-inline block {name!r}: it is the root block or does not exist")
    realize = path[-1]
    block = realize.block
    if block.init is not None:
        raise ScheduleError(f"cannot {what}: the block has an init (T.init()), it is a reduction")
    scope = check_stage_pipeline(func, path, what)
    store = _single_store(block, "consumers computing one element per instance")
    from .blocks import access

    produced = [r.buffer for r in access(block)[0] if writers_of(scope, r.buffer)]
    produced = [b for k, b in enumerate(produced) if not any(b is x for x in produced[:k])]
    if len(produced) != 1:
        raise ScheduleError(
            f"cannot reverse-inline block {name!r}: it must read exactly one intermediate buffer written "
            f"by a producer block of its scope, found {len(produced)}"
        )
    buf = produced[0]
    if _is_param(func, buf):  # TVM: the producer must not be an output block
        raise ScheduleError(
            f"cannot {what}: the buffer it reads, {buf.name}, is an output of the function; inlining "
            f"would leave {buf.name} unwritten"
        )
    check_complete(path, what)
    deps = dependences(scope)
    into = [d for d in deps if d[1] is realize]
    if len(into) != 1 or into[0][2] != "RAW":
        raise ScheduleError(
            f"cannot {what}: the block must have a single producer (one read-after-write dependence), "
            f"found {len(into)} dependence(s)"
        )
    prod_realize = into[0][0]
    producer = prod_realize.block
    ppath = find_block_path(func.body, producer.name_hint)
    if producer.init is not None or any(iv.iter_type != IterType.DATA_PAR for iv in producer.iter_vars):
        raise ScheduleError(
            f"cannot reverse-inline block {name!r}: its producer {producer.name_hint!r} is a reduction; "
            f"only a spatial producer can absorb a consumer"
        )
    check_complete(ppath, f"{what} into its producer {producer.name_hint!r}")
    out_of = [d for d in deps if d[0] is prod_realize]
    if len(out_of) != 1:
        others = [d[1].block.name_hint for d in out_of if d[1] is not realize]
        raise ScheduleError(
            f"cannot {what}: its producer {producer.name_hint!r} must have this block as its only "
            f"consumer, but {buf.name} is also used by block(s) {', '.join(others) or '(none)'}"
        )
    if not _is_true(realize.predicate):
        raise ScheduleError(f"cannot reverse-inline block {name!r}: it has a predicate (T.where)")
    loads = [x for x in _all_loads(store.value) if x.buffer is buf]
    loads += [x for i in store.indices for x in _all_loads(i) if x.buffer is buf]
    if store.buffer is buf or not loads:
        raise ScheduleError(f"cannot {what}: its store must read {buf.name} and write another buffer")
    from ..analysis.block_access import same_expr

    first = loads[0]
    if any(not same_expr(tuple(x.indices), tuple(first.indices)) for x in loads[1:]):
        raise ScheduleError(f"cannot {what}: it loads {buf.name} at different indices")
    # a producer guarded by an `if` (what an earlier reverse_compute_inline leaves) absorbs the
    # consumer too, as in TVM: the store inside the `if` is rewritten
    pguard = None
    if isinstance(producer.body, IfThenElse) and producer.body.else_case is None:
        pguard = producer.body.condition
        pstore = _single_store(
            producer.replace(body=producer.body.then_case), "producers computing one element per instance"
        )
    else:
        pstore = _single_store(producer, "producers computing one element per instance")
    if pstore.buffer is not buf:
        raise ScheduleError(f"cannot {what}: producer {producer.name_hint!r} does not store {buf.name}")
    doms = {iv.var: iv.dom for iv in block.iter_vars}
    ana = Analyzer()
    detected = detect_bijective(list(first.indices), doms, ana)
    if detected is None:
        shown = ", ".join(str(i) for i in first.indices)
        raise ScheduleError(
            f"cannot {what}: the indices {buf.name}[{shown}] are not a bijective affine map of the "
            f"block's iters, so each element of {buf.name} cannot be traced back to one consumer instance"
        )
    vmap = inverse(*detected, list(pstore.indices))
    pdoms = {iv.var: iv.dom for iv in producer.iter_vars}
    for var, dom in pdoms.items():
        ana.bind(var, dom, allow_override=True)
    conds = []
    for iv in block.iter_vars:
        expr = vmap[iv.var]
        rng = ana.int_set(expr)
        lo, hi = rng.min_value, rng.max_value
        top = iv.dom.min + iv.dom.extent - 1
        short = isinstance(hi, PrimExpr) and ana.can_prove(hi < top)
        if short or (isinstance(lo, PrimExpr) and ana.can_prove(lo > iv.dom.min)):
            raise ScheduleError(
                f"cannot {what}: producer {producer.name_hint!r} does not cover the iter domain of "
                f"{iv.var.name} (it writes fewer elements of {buf.name} than the block reads)"
            )
        if not ana.can_prove(expr >= iv.dom.min):
            conds.append(iv.dom.min <= expr)
        if not ana.can_prove(expr < iv.dom.min + iv.dom.extent):
            conds.append(expr < simplify(iv.dom.min + iv.dom.extent))
    pbind = {iv.var: v for iv, v in zip(producer.iter_vars, prod_realize.iter_values)}
    guard = _and_all([ana.simplify(c) for c in conds])  # over the producer's iter vars
    if pguard is not None:
        with ana.constraint_scope(guard):
            if not ana.can_prove(pguard):
                raise ScheduleError(
                    f"cannot {what}: producer {producer.name_hint!r} stores {buf.name} only where "
                    f"{pguard}, which does not hold for every element the block reads"
                )
        guard = pguard if _is_true(guard) else guard
    predicate = substitute(guard, pbind)
    if not _is_true(prod_realize.predicate):
        with ana.constraint_scope(predicate):
            if not ana.can_prove(prod_realize.predicate):
                raise ScheduleError(
                    f"cannot {what}: producer {producer.name_hint!r} has a predicate "
                    f"({prod_realize.predicate}) that the inlined block's bounds do not imply"
                )
    opaque = _opaque_use(func, buf)
    if opaque:
        raise ScheduleError(f"cannot {what}: {opaque}")

    class _Swap(StmtExprMutator):
        def visit_BufferLoad(self, op):
            if op.buffer is buf:
                return pstore.value
            return super().visit_BufferLoad(op)

    value = substitute(_Swap().visit_expr(store.value), vmap)
    indices = tuple(simplify(substitute(_Swap().visit_expr(i), vmap)) for i in store.indices)
    new_store = BufferStore(store.buffer, value, indices)
    # as TVM (>= 0.17): where the producer computes more than the consumer stored, the store is
    # guarded by an `if` over the producer's iter vars in the block body (the realize keeps its
    # own predicate)
    new_body = new_store if _is_true(guard) else IfThenElse(guard, new_store)
    reads, writes = get_block_read_write_region(producer.replace(body=new_body))
    new_producer = producer.replace(body=new_body, reads=reads, writes=writes)
    new_realize = prod_realize.replace(block=new_producer)
    body = replace_stmts(func.body, {removal_root(path): None, prod_realize: new_realize})
    body = _drop_alloc(body, buf)
    return func.with_body(body)


def _and_all(conds: list):
    from ..expr import const, logical_and

    out = None
    for c in conds:
        if isinstance(c, IntImm) and c.value:
            continue
        out = c if out is None else logical_and(out, c)
    return const(True) if out is None else out


def _all_loads(expr) -> list:
    loads: list = []

    class _L(StmtExprVisitor):
        def visit_BufferLoad(self, op):
            loads.append(op)
            super().visit_BufferLoad(op)

    _L().visit_expr(expr)
    return loads


__all__ = ["compute_inline", "reverse_compute_inline", "BlockRealize"]
