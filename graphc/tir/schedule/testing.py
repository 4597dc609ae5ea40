"""Helpers for testing schedules, under TVM's names (`tvm.tir.schedule.testing`).

- `verify_trace_roundtrip(sch, mod)`: replaying `sch.trace` on a fresh schedule of `mod`, and
  running the trace's printed Python on another, both give `sch.mod` again.
- `assert_structural_equal_ignore_global_symbol(a, b)`: structural equality of two PrimFuncs
  (or modules) whatever their "global_symbol" attributes say.

>>> from graphc import tir
>>> from graphc.script import from_source
>>> f = from_source('''
... @T.prim_func
... def main(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
...     for i in range(8):
...         with T.block("B"):
...             vi = T.axis.spatial(8, i)
...             B[vi] = A[vi] + 1.0
... ''')
>>> sch = tir.Schedule(f)
>>> _ = sch.split(sch.get_loops("B")[0], [None, 4])
>>> verify_trace_roundtrip(sch, f).mod["main"].body is not None
True
"""

from __future__ import annotations

from ...ir import IRModule
from ...ir.structural import assert_structural_equal
from ..function import PrimFunc
from .schedule import Schedule


def _strip(x):
    if isinstance(x, PrimFunc):
        return x.without_attr("global_symbol")
    if isinstance(x, IRModule):
        return IRModule({gv.name_hint: _strip(f) for gv, f in x.items()})
    return x


def assert_structural_equal_ignore_global_symbol(func1, func2, *args, **kwargs) -> None:
    """Assert `func1` and `func2` are structurally equal, ignoring their "global_symbol"s."""
    assert_structural_equal(_strip(func1), _strip(func2), *args, **kwargs)


def verify_trace_roundtrip(
    sch: Schedule, mod, *, debug_mask="all", text_format=("json", "python")
) -> Schedule:
    """Check that `sch.trace` rebuilds `sch.mod` from `mod`, replayed and as printed Python.

    graphc's traces have no JSON form: "json" in `text_format` is accepted and the direct replay
    stands for it. Returns the schedule the printed Python rebuilt.
    """
    replay = Schedule(mod, debug_mask=debug_mask)
    sch.trace.apply_to(replay)
    assert_structural_equal(replay.mod, sch.mod)
    if isinstance(text_format, str):
        text_format = (text_format,)
    if "python" not in text_format:
        return replay
    from ... import tir

    printed = Schedule(mod, debug_mask=debug_mask)
    code = "\n".join(sch.trace.as_python())
    exec(code, dict(vars(tir)), {"sch": printed})  # noqa: S102 - the trace is our own printed Python
    assert_structural_equal(printed.mod, sch.mod)
    return printed


__all__ = ["verify_trace_roundtrip", "assert_structural_equal_ignore_global_symbol"]
