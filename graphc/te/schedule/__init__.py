"""TVM's legacy TE schedules: `te.create_schedule` records stage calls, replayed on `tir.Schedule`.

>>> from graphc import te
>>> A = te.placeholder((16,), name="A")
>>> B = te.compute((16,), lambda i: A[i] * 2.0, name="B")
>>> s = te.create_schedule(B.op)
>>> xo, xi = s[B].split(B.op.axis[0], factor=4)
>>> s[B].vectorize(xi)
>>> mod = te.te_schedule_to_module(s, [A, B])
>>> [mod["main"].body.block.body.extent.value]
[4]
"""

from .record import Schedule, Stage, create_schedule
from .replay import te_schedule_to_module

__all__ = ["Schedule", "Stage", "create_schedule", "te_schedule_to_module"]
