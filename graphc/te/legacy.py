"""TVM's legacy TE-schedule names: `te.thread_axis` works, `te.create_schedule` points to tir.Schedule.

graphc schedules TensorIR, not TE stages: build the PrimFunc with `te.create_prim_func` and
transform it with `tir.Schedule`, as TVM Unity does.

>>> from graphc import te
>>> tx = te.thread_axis("threadIdx.x")
>>> tx.thread_tag, tx.var.name, tx.iter_type.name
('threadIdx.x', 'threadIdx.x', 'THREAD_INDEX')
"""

from __future__ import annotations

from ..errors import ScheduleError
from ..tir.expr import Range, Var
from ..tir.stmt import IterType, IterVar


def thread_axis(dom=None, tag: str = "", name: str = "", span=None) -> IterVar:
    """A GPU thread axis (`threadIdx.x`, `blockIdx.y`, ...) as a THREAD_INDEX IterVar.

    `te.thread_axis("threadIdx.x")` names the tag first, as TVM allows.
    """
    if isinstance(dom, str):
        dom, tag = None, dom
    if isinstance(dom, list | tuple):
        dom = Range.make(dom[0], dom[1])
    return IterVar(dom, Var(name or tag or "iter", "int32"), IterType.THREAD_INDEX, tag)


def create_schedule(ops=None):
    """Not supported: graphc has no TE stage schedules.

    >>> from graphc import te
    >>> te.create_schedule([])
    Traceback (most recent call last):
    ...
    graphc.errors.ScheduleError: te.create_schedule (legacy TE schedules) is not supported; ...
    """
    raise ScheduleError(
        "te.create_schedule (legacy TE schedules) is not supported; build the function with "
        "func = te.create_prim_func([A, B, C]) and schedule it with sch = tir.Schedule(func): "
        "sch.split(sch.get_loops(sch.get_block('C'))[0], factors=[None, 32]) replaces "
        "s[C].split(C.op.axis[0], factor=32)"
    )


__all__ = ["thread_axis", "create_schedule"]
