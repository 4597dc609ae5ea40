"""How a loop runs: parallel, vectorized, unrolled, serial, or bound to a GPU thread axis.

TVM's rule: a loop that binds a reduction block iter (directly or through an expression)
cannot be parallel, vectorized or bound to blockIdx/vthread, because different iterations
would accumulate into the same element; threadIdx may bind one (a cross-thread reduction).
"""

from __future__ import annotations

from ...errors import ScheduleError
from ..analysis.var_use import uses_var
from ..expr import Var
from ..stmt import BlockRealize, For, ForKind, IterType, IterVar
from .state import check_exists, find_loop_path, replace_stmts, scope_realizes

THREAD_TAGS = (
    "blockIdx.x", "blockIdx.y", "blockIdx.z", "threadIdx.x", "threadIdx.y", "threadIdx.z",
    "vthread", "vthread.x", "vthread.y", "vthread.z",
)  # fmt: skip


def check_spatial_only(loop: For, what: str, allow_reduce: bool = False) -> None:
    """Raise unless every block under `loop` (nested ones too) binds only spatial iters to
    expressions of it."""
    from .state import walk

    for realize in (s for s in walk(loop.body) if isinstance(s, BlockRealize)):
        block = realize.block
        for iv, value in zip(block.iter_vars, realize.iter_values):
            if not uses_var(value, loop.loop_var):
                continue
            if iv.iter_type == IterType.DATA_PAR:
                continue
            if iv.iter_type == IterType.COMM_REDUCE and allow_reduce:
                continue
            kind = "reduction" if iv.iter_type == IterType.COMM_REDUCE else iv.iter_type.name.lower()
            raise ScheduleError(
                f"cannot {what} loop {loop.loop_var.name}: it binds the {kind} iter {iv.var.name} of "
                f"block {block.name_hint!r}; different iterations would update the same element "
                f"(only loops over spatial iters can be {what}d)"
            )


def check_compact_dataflow(func, path: list, what: str) -> None:
    """TVM's rule for parallel/vectorize/bind: every block directly under the loop is a complete
    block (spatial iters only, no buffer both read and written) or a reduction block (an init,
    affine bindings, no reduction iter indexing its output). We also accept a block that reads
    what it writes only at the very element it writes (the update block `decompose_reduction`
    leaves): its instances at different spatial points touch different elements."""
    from .scope import binding_is_affine, reduction_violation
    from .state import find_path

    loop = path[-1]
    for realize in scope_realizes(loop.body):
        block = realize.block
        spatial = all(iv.iter_type == IterType.DATA_PAR for iv in block.iter_vars)
        reads, writes = _access(block)
        overlap = {id(w.buffer) for w in writes} & {id(r.buffer) for r in reads}
        if spatial and not overlap:
            continue
        if block.init is None and _updates_in_place(block, overlap):
            continue
        full = path + find_path(loop.body, lambda x, r=realize: x is r)
        why = _local_reduction_violation(func, full, reduction_violation, binding_is_affine)
        if why is None:
            continue
        complete = "it reads and writes one buffer" if overlap else "it has non-spatial iters"
        raise ScheduleError(
            f"cannot {what} loop {loop.loop_var.name}: block {block.name_hint!r} under it is neither a "
            f"complete block ({complete}) nor a reduction block ({why}), so its instances may depend on "
            f"one another"
        )


def _updates_in_place(block, overlap: set) -> bool:
    """Whether every load of a buffer in `overlap` (ids) reads the indices its single store writes."""
    from ..analysis.block_access import same_expr
    from ..functor import StmtExprVisitor

    stores: dict = {}
    loads: list = []

    class _V(StmtExprVisitor):
        def visit_BufferStore(self, op):
            if id(op.buffer) in overlap:
                stores.setdefault(id(op.buffer), []).append(tuple(op.indices))
            super().visit_BufferStore(op)

        def visit_BufferLoad(self, op):
            if id(op.buffer) in overlap:
                loads.append((id(op.buffer), tuple(op.indices)))
            super().visit_BufferLoad(op)

    _V().visit_stmt(block.body)
    if set(stores) != overlap or any(len(v) != 1 for v in stores.values()):
        return False
    return all(same_expr(idx, stores[b][0]) for b, idx in loads)


def _access(block):
    from .blocks import access

    return access(block)


def _local_reduction_violation(func, path: list, reduction_violation, binding_is_affine) -> str | None:
    block = path[-1].block
    if block.init is None:
        return "it has no init"
    if not binding_is_affine(func, path):
        return "its bindings are not affine"
    if any(iv.iter_type not in (IterType.DATA_PAR, IterType.COMM_REDUCE) for iv in block.iter_vars):
        return "it has iters that are neither spatial nor reductions"
    why = reduction_violation(func, path)
    if why and "index" in why:
        return why
    return None


def _set_kind(func, func_name: str, var: Var, kind: ForKind, what: str, thread: IterVar | None = None):
    path = check_exists(find_loop_path(func.body, var), f"loop {var.name}", func_name)
    loop: For = path[-1]
    # unrolling a bound loop drops the binding (as in TVM); other kinds would lose it silently
    if loop.kind == ForKind.THREAD_BINDING and kind not in (ForKind.THREAD_BINDING, ForKind.UNROLLED):
        raise ScheduleError(
            f"cannot {what} loop {var.name}: it is already bound to {loop.thread_binding.thread_tag}"
        )
    if kind == ForKind.THREAD_BINDING and loop.kind not in (ForKind.SERIAL, ForKind.THREAD_BINDING):
        raise ScheduleError(f"cannot bind loop {var.name}: it is already {loop.kind.value}")
    if kind in (ForKind.PARALLEL, ForKind.VECTORIZED, ForKind.THREAD_BINDING):
        check_compact_dataflow(func, path, what)
    if kind in (ForKind.PARALLEL, ForKind.VECTORIZED):
        check_spatial_only(loop, what)
    if kind == ForKind.THREAD_BINDING:
        check_spatial_only(loop, what, allow_reduce=thread.thread_tag.startswith("threadIdx"))
    new = For(loop.loop_var, loop.min, loop.extent, kind, loop.body, thread, loop.annotations)
    return func.with_body(replace_stmts(func.body, {loop: new}))


def parallel(func, func_name: str, var: Var):
    """Mark loop `var` parallel."""
    return _set_kind(func, func_name, var, ForKind.PARALLEL, "parallelize")


def vectorize(func, func_name: str, var: Var):
    """Mark loop `var` vectorized."""
    return _set_kind(func, func_name, var, ForKind.VECTORIZED, "vectorize")


def unroll(func, func_name: str, var: Var):
    """Mark loop `var` unrolled (always legal; a thread binding it had is dropped)."""
    return _set_kind(func, func_name, var, ForKind.UNROLLED, "unroll")


def bind(func, func_name: str, var: Var, thread_axis: str):
    """Bind loop `var` to a GPU thread axis such as "threadIdx.x"."""
    if thread_axis not in THREAD_TAGS:
        raise ScheduleError(f"unknown thread axis {thread_axis!r}; expected one of {', '.join(THREAD_TAGS)}")
    tag = "vthread" if thread_axis == "vthread" else thread_axis
    thread = IterVar(None, Var(tag, var.dtype), IterType.THREAD_INDEX, tag)
    return _set_kind(func, func_name, var, ForKind.THREAD_BINDING, "bind", thread)
