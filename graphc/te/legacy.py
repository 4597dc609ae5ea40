"""TVM's legacy TE-schedule names: `te.thread_axis` and `te.create_schedule`.

`te.create_schedule` (graphc/te/schedule/) records TE stage calls and replays them on a
`tir.Schedule` over `te.create_prim_func`; there is no second scheduling engine.

>>> from graphc import te
>>> tx = te.thread_axis("threadIdx.x")
>>> tx.thread_tag, tx.var.name, tx.iter_type.name
('threadIdx.x', 'threadIdx.x', 'THREAD_INDEX')
"""

from __future__ import annotations

from ..tir.expr import Range, Var
from ..tir.stmt import IterType, IterVar
from .schedule import create_schedule


def thread_axis(dom=None, tag: str = "", name: str = "", span=None) -> IterVar:
    """A GPU thread axis (`threadIdx.x`, `blockIdx.y`, ...) as a THREAD_INDEX IterVar.

    `te.thread_axis("threadIdx.x")` names the tag first, as TVM allows.
    """
    if isinstance(dom, str):
        dom, tag = None, dom
    if isinstance(dom, list | tuple):
        dom = Range.make(dom[0], dom[1])
    return IterVar(dom, Var(name or tag or "iter", "int32"), IterType.THREAD_INDEX, tag)


__all__ = ["thread_axis", "create_schedule"]
