"""`LowerCrossThreadReduction`: reductions whose loops are bound to `threadIdx` become an
in-thread reduction plus one `tvm_thread_allreduce` across the threads (TVM's pass of that name).

A reduction block `B[i] = B[i] + A[i, k]` under `for k_1 in T.thread_binding(128,
"threadIdx.x")` has every thread of the block contribute to one element, so no thread may
write `B[i]` on its own. The block is rewritten, inside the outermost thread-bound reduce loop,
into (names after the block `B`):

- `B_in_thread_init` / `B_in_thread`: when serial reduce loops remain inside the thread-bound
  ones, each thread first folds its share into a one-element "local" buffer;
- `B_cross_thread`: `T.tvm_thread_allreduce(kind, value, cond, B_cross_thread[0], k_1)`
  combines the threads' values (LowerThreadAllreduce lowers it for the target);
- `B_write_back`: `B[i] = B_cross_thread[0]`, by the first thread only unless `B` is "local"
  (then every thread keeps its own copy of the result).

The thread-bound reduce loops must be outside the serial ones, and no spatial loop may lie
inside them; otherwise a `ScheduleError` says which loop to move. The pass runs on the block
form after `PlanAndUpdateBufferAllocationLocation` (the new blocks are opaque) and changes
nothing in functions without such loops.

>>> from graphc.script import from_source
>>> f = from_source('''
... @T.prim_func
... def main(A: T.Buffer((4, 32), "float32"), B: T.Buffer((4,), "float32")):
...     for i in T.thread_binding(4, thread="blockIdx.x"):
...         for k in T.thread_binding(32, thread="threadIdx.x"):
...             with T.block("B"):
...                 vi, vk = T.axis.remap("SR", [i, k])
...                 with T.init():
...                     B[vi] = T.float32(0)
...                 B[vi] = B[vi] + A[vi, vk]
... ''')
>>> names = []
>>> from graphc.tir.functor import post_order_visit
>>> post_order_visit(lower_cross_thread_reduction(f).body,
...                  lambda s: names.append(s.name_hint) if type(s).__name__ == "Block" else None)
>>> names
['B_cross_thread', 'B_write_back', '', 'root']
"""

from __future__ import annotations

from ...errors import ScheduleError
from ..analysis.var_use import uses_any_var
from ..buffer import decl_buffer
from ..expr import Add, Max, Min, Mul, all_of, const, convert
from ..function import PrimFunc
from ..functor import substitute
from ..op import tvm_thread_allreduce
from ..schedule.reduction import _combine, _combiner
from ..schedule.state import children, replace_stmts
from ..stmt import Block, BlockRealize, BufferStore, Evaluate, For, ForKind, IterType, SeqStmt
from .function_pass import prim_func_pass

REDUCE_KINDS = {Add: "sum", Mul: "prod", Max: "max", Min: "min"}


def _uses(exprs, variables) -> bool:
    wanted = set(variables)
    return any(uses_any_var(e, wanted) for e in exprs)


def _is_thread(loop: For) -> bool:
    tag = loop.thread_binding.thread_tag if loop.thread_binding is not None else ""
    return loop.kind == ForKind.THREAD_BINDING and tag.startswith("threadIdx")


def _targets(root) -> list:
    """Paths (root .. BlockRealize) of the reduction blocks that reduce across threads."""
    found, stack = [], [(root, ())]
    while stack:
        stmt, path = stack.pop()
        path = (*path, stmt)
        if isinstance(stmt, BlockRealize) and stmt.block.init is not None:
            reduce_values = [v for iv, v in zip(stmt.block.iter_vars, stmt.iter_values)
                             if iv.iter_type == IterType.COMM_REDUCE]
            loops = [s for s in path if isinstance(s, For)]
            if any(_is_thread(lp) and _uses(reduce_values, [lp.loop_var]) for lp in loops):
                found.append(path)
                continue
        stack.extend((child, path) for child in reversed(children(stmt)))
    return found


def _conjuncts(expr) -> list:
    from ..expr import And

    return _conjuncts(expr.a) + _conjuncts(expr.b) if isinstance(expr, And) else [expr]


def _opaque(name: str, body, predicate=None) -> BlockRealize:
    predicate = predicate if predicate is not None else const(True)
    return BlockRealize((), predicate, Block((), (), (), name, body))


def _rewrite(func: PrimFunc, path: tuple) -> PrimFunc:
    realize: BlockRealize = path[-1]
    block = realize.block
    name = block.name_hint
    what = f"lower the cross-thread reduction of block {name!r}"
    buf, indices, kind, operand = _combiner(block, what)
    reduce_values = [v for iv, v in zip(block.iter_vars, realize.iter_values)
                     if iv.iter_type != IterType.DATA_PAR]
    loops = [s for s in path if isinstance(s, For)]
    reduce_loops = [lp for lp in loops if _uses(reduce_values, [lp.loop_var])]
    threads = [lp for lp in reduce_loops if _is_thread(lp)]
    serial = [lp for lp in reduce_loops if not _is_thread(lp)]
    for lp in serial:
        if lp.kind not in (ForKind.SERIAL, ForKind.UNROLLED):
            raise ScheduleError(f"cannot {what}: its reduce loop {lp.loop_var.name} is {lp.kind.value}; "
                                "only threadIdx-bound and serial loops may reduce across threads")
    outer = reduce_loops[0]
    inner = loops[loops.index(outer):]
    for lp in inner:
        if lp not in reduce_loops:
            raise ScheduleError(f"cannot {what}: spatial loop {lp.loop_var.name} lies inside the "
                                f"reduce loop {outer.loop_var.name}; reorder it outside")
    if serial and loops.index(serial[0]) < loops.index(threads[-1]):
        # a thread-bound loop runs all its iterations at once, so it may move outside serial
        # loops, provided the nest holds nothing else
        func, path = _hoist_threads(func, path, inner, threads, serial, what)
        realize = path[-1]
        loops = [s for s in path if isinstance(s, For)]
        reduce_loops = loops[len(loops) - len(inner):]
        threads, serial = reduce_loops[:len(threads)], reduce_loops[len(threads):]
    top = threads[0]

    vmap = {iv.var: v for iv, v in zip(block.iter_vars, realize.iter_values)}
    idx = tuple(substitute(i, vmap) for i in indices)
    value = substitute(operand, vmap)
    identity = substitute(block.init.value, vmap)
    reduce_vars = [lp.loop_var for lp in reduce_loops]
    spatial_pred = []
    for cond in _conjuncts(realize.predicate):
        if not _uses([cond], reduce_vars):
            spatial_pred.append(cond)
    cross = decl_buffer((1,), buf.dtype, f"{buf.name}_cross_thread", scope="local")
    allocs = [cross]
    replaced: dict = {}
    cond = realize.predicate
    if serial:
        local = decl_buffer((1,), buf.dtype, f"{buf.name}_in_thread", scope="local")
        allocs.insert(0, local)
        step = BufferStore(local, _combine(kind, local[0], value), (const(0),))
        update = _opaque(f"{name}_in_thread", step, realize.predicate)
        replaced[realize] = update
        value, cond = local[0], const(True)
    allreduce = Evaluate(tvm_thread_allreduce(REDUCE_KINDS[kind], value, cond, cross[0],
                                              *[lp.loop_var for lp in threads]))
    first_thread = [] if buf.scope.startswith("local") else \
        [convert(lp.loop_var == lp.min) for lp in threads]
    write_back = _opaque(f"{name}_write_back", BufferStore(buf, cross[0], idx),
                         all_of(*spatial_pred, *first_thread) if spatial_pred or first_thread else None)
    tail = [_opaque(f"{name}_cross_thread", allreduce), write_back]
    if serial:
        init = _opaque(f"{name}_in_thread_init", BufferStore(allocs[0], identity, (const(0),)))
        new_outer = replace_stmts(serial[0], replaced)
        replaced = {serial[0]: SeqStmt((init, new_outer, *tail))}
    else:
        replaced[realize] = SeqStmt(tuple(tail))
    new_top_body = replace_stmts(top.body, replaced)
    wrapper = BlockRealize((), const(True), Block((), (), (), "", new_top_body, None, tuple(allocs)))
    return func.with_body(replace_stmts(func.body, {top: top.replace(body=wrapper)}))


def _hoist_threads(func, path, nest, threads, serial, what):
    """Reorder the perfect loop nest `nest` (ending at the block) so `threads` come first."""
    for lp, nxt in zip(nest, [*nest[1:], path[-1]]):
        if lp.body is not nxt:
            raise ScheduleError(f"cannot {what}: serial reduce loop {serial[0].loop_var.name} is outside the "
                                f"thread-bound reduce loop {threads[-1].loop_var.name} and the loops between "
                                "hold other statements; reorder the threadIdx loops outside the serial ones")
    stmt = path[-1]
    for lp in reversed([*threads, *serial]):
        stmt = lp.replace(body=stmt)
    func = func.with_body(replace_stmts(func.body, {nest[0]: stmt}))
    return func, _find_path(func.body, path[-1])


def _find_path(root, target) -> tuple:
    stack = [(root, ())]
    while stack:
        stmt, path = stack.pop()
        path = (*path, stmt)
        if stmt is target:
            return path
        stack.extend((child, path) for child in reversed(children(stmt)))
    raise ScheduleError("internal error: lost the reduction block while reordering its loops")


def lower_cross_thread_reduction(func: PrimFunc) -> PrimFunc:
    """`func` with every reduction across threadIdx-bound loops in the form described above."""
    for _ in range(10_000):  # one block per round: the paths change with every rewrite
        paths = _targets(func.body)
        if not paths:
            return func
        func = _rewrite(func, paths[0])
    return func


@prim_func_pass(opt_level=0, name="LowerCrossThreadReduction")
class LowerCrossThreadReduction:
    """Reductions over threadIdx-bound loops -> in-thread reduction + tvm_thread_allreduce."""

    def transform_function(self, func, mod, ctx):
        return lower_cross_thread_reduction(func)


__all__ = ["REDUCE_KINDS", "LowerCrossThreadReduction", "lower_cross_thread_reduction"]
