"""How a loop runs: parallel, vectorized, unrolled, serial, or bound to a GPU thread axis.

TVM's rule: a loop that binds a reduction block iter (directly or through an expression)
cannot be parallel, vectorized or bound to blockIdx/vthread, because different iterations
would accumulate into the same element; threadIdx may bind one (a cross-thread reduction).
"""

from __future__ import annotations

from ...errors import ScheduleError
from ..analysis.var_use import uses_var
from ..expr import Var
from ..stmt import For, ForKind, IterType, IterVar
from .state import check_exists, find_loop_path, replace_stmts, scope_realizes

THREAD_TAGS = (
    "blockIdx.x", "blockIdx.y", "blockIdx.z", "threadIdx.x", "threadIdx.y", "threadIdx.z",
    "vthread", "vthread.x", "vthread.y", "vthread.z",
)  # fmt: skip


def check_spatial_only(loop: For, what: str, allow_reduce: bool = False) -> None:
    """Raise unless every block under `loop` binds only spatial iters to expressions of it."""
    for realize in scope_realizes(loop.body):
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


def _set_kind(func, func_name: str, var: Var, kind: ForKind, what: str, thread: IterVar | None = None):
    path = check_exists(find_loop_path(func.body, var), f"loop {var.name}", func_name)
    loop: For = path[-1]
    if loop.kind == ForKind.THREAD_BINDING and kind != ForKind.THREAD_BINDING:
        raise ScheduleError(
            f"cannot {what} loop {var.name}: it is already bound to {loop.thread_binding.thread_tag}"
        )
    if kind == ForKind.THREAD_BINDING and loop.kind not in (ForKind.SERIAL, ForKind.THREAD_BINDING):
        raise ScheduleError(f"cannot bind loop {var.name}: it is already {loop.kind.value}")
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
    """Mark loop `var` unrolled (always legal)."""
    return _set_kind(func, func_name, var, ForKind.UNROLLED, "unroll")


def bind(func, func_name: str, var: Var, thread_axis: str):
    """Bind loop `var` to a GPU thread axis such as "threadIdx.x"."""
    if thread_axis not in THREAD_TAGS:
        raise ScheduleError(f"unknown thread axis {thread_axis!r}; expected one of {', '.join(THREAD_TAGS)}")
    tag = "vthread" if thread_axis == "vthread" else thread_axis
    thread = IterVar(None, Var(tag, var.dtype), IterType.THREAD_INDEX, tag)
    return _set_kind(func, func_name, var, ForKind.THREAD_BINDING, "bind", thread)
