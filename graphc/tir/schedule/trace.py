"""Schedule handles (BlockRV, LoopRV) and the Trace: the primitives applied, replayable.

A trace prints as the Python that made it, with handles named in order of creation
(`b0`, `l1`, ...), and `trace.apply_to(sch)` replays it on another schedule:

>>> from graphc.tir.schedule.trace import Trace, BlockRV
>>> t = Trace()
>>> t.append("get_block", ("C",), {}, BlockRV("C", "main"))
>>> print(t)
b0 = sch.get_block("C")
"""

from __future__ import annotations

import dataclasses
import functools

from ...errors import ScheduleError
from ..expr import FloatImm, IntImm, PrimExpr, StringImm, Var


@dataclasses.dataclass(frozen=True, eq=False)
class BlockRV:
    """A handle to a block: its name (unique within a function) and the function's name."""

    name: str
    func_name: str

    def __repr__(self) -> str:
        return f"BlockRV({self.name!r})"


@dataclasses.dataclass(frozen=True, eq=False)
class LoopRV:
    """A handle to a loop: the loop's Var object (every For has its own Var)."""

    var: Var
    func_name: str

    def __repr__(self) -> str:
        return f"LoopRV({self.var.name})"


def is_rv(x) -> bool:
    return isinstance(x, BlockRV | LoopRV)


@dataclasses.dataclass
class Instruction:
    """One primitive call: method name, arguments (handles inside), and the handles it made."""

    name: str
    args: tuple
    kwargs: dict
    outputs: object  # a handle, a list/tuple of handles, or None


class Trace:
    """The list of primitives a Schedule applied, in order."""

    def __init__(self, insts=None):
        self.insts: list[Instruction] = list(insts or [])

    def append(self, name: str, args: tuple, kwargs: dict, outputs) -> None:
        self.insts.append(Instruction(name, tuple(args), dict(kwargs), outputs))

    def copy(self) -> Trace:
        return Trace(self.insts)

    def __len__(self) -> int:
        return len(self.insts)

    # -- replay --------------------------------------------------------------------------
    def apply_to(self, sch) -> dict:
        """Replay every instruction on `sch`; returns the map from old handles to new ones."""
        rv_map: dict = {}

        def remap(x):
            if is_rv(x):
                return rv_map[id(x)]
            if isinstance(x, list | tuple):
                return type(x)(remap(y) for y in x)
            return x

        for inst in self.insts:
            args = tuple(remap(a) for a in inst.args)
            kwargs = {k: remap(v) for k, v in inst.kwargs.items()}
            result = getattr(sch, inst.name)(*args, **kwargs)
            _bind_outputs(inst.outputs, result, rv_map)
        return rv_map

    apply_to_schedule = apply_to

    # -- printing ------------------------------------------------------------------------
    def as_python(self) -> list[str]:
        names: dict[int, str] = {}

        def name_of(rv) -> str:
            if id(rv) not in names:
                names[id(rv)] = f"{'b' if isinstance(rv, BlockRV) else 'l'}{len(names)}"
            return names[id(rv)]

        def fmt(x) -> str:
            if is_rv(x):
                return names.get(id(x), repr(x))
            if isinstance(x, list | tuple):
                inner = ", ".join(fmt(y) for y in x)
                return f"[{inner}]" if isinstance(x, list) else f"({inner}{',' if len(x) == 1 else ''})"
            return format_value(x)

        lines = []
        for inst in self.insts:
            args = [fmt(a) for a in inst.args] + [f"{k}={fmt(v)}" for k, v in inst.kwargs.items()]
            call = f"sch.{inst.name}({', '.join(args)})"
            outs = inst.outputs
            if outs is None:
                lines.append(call)
            elif is_rv(outs):
                lines.append(f"{name_of(outs)} = {call}")
            elif len(outs) == 0:
                lines.append(call)
            else:
                lhs = ", ".join(name_of(rv) for rv in outs)
                lines.append(f"{lhs}{',' if len(outs) == 1 else ''} = {call}")
        return lines

    def __str__(self) -> str:
        return "\n".join(self.as_python())

    def __repr__(self) -> str:
        return str(self)

    def show(self) -> None:
        print(self)


def traced(method):
    """Decorate a Schedule method: record each successful top-level call in `self._trace`.

    Calls made by another primitive (nested) are not recorded; a call that raises is not either.
    """

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        self._depth += 1
        try:
            result = method(self, *args, **kwargs)
        except ScheduleError as err:
            if self._depth == 1 and not getattr(err, "located", False):
                _add_location(self, err, args)
            raise
        finally:
            self._depth -= 1
        if self._depth == 0:
            self._trace.append(method.__name__, args, kwargs, result)
        return result

    return wrapper


def _add_location(sch, err, args) -> None:
    """Append the printed neighbourhood of the first block or loop handle among `args`."""
    from .render import locate

    err.located = True
    rv = next((a for a in args if is_rv(a)), None)
    if rv is None or rv.func_name not in sch.mod:
        return
    func = sch.mod[rv.func_name]
    if isinstance(rv, BlockRV):
        where = locate(func, rv.func_name, block=sch._name(rv))
    else:
        where = locate(func, rv.func_name, loop=rv.var.name)
    if where:
        err.args = (f"{err.args[0]}\n{where}",) + tuple(err.args[1:])


def _bind_outputs(old, new, rv_map: dict) -> None:
    if old is None:
        return
    if is_rv(old):
        rv_map[id(old)] = new
        return
    for a, b in zip(old, new):
        _bind_outputs(a, b, rv_map)


def format_value(x) -> str:
    """A Python spelling of a primitive's argument (constants, variables, strings)."""
    if isinstance(x, IntImm | FloatImm):
        return repr(x.value)
    if isinstance(x, StringImm):
        return repr(x.value)
    if isinstance(x, Var):
        return x.name
    if isinstance(x, PrimExpr):
        return str(x)
    if isinstance(x, str):
        return f'"{x}"' if '"' not in x else repr(x)
    if callable(x) and not isinstance(x, type):
        return _format_index_map(x)
    return repr(x)


def _format_index_map(fn) -> str:
    """An index map (a Python function of indices) as the lambda it computes."""
    import inspect

    try:
        names = list(inspect.signature(fn).parameters)
        out = fn(*(Var(n) for n in names))
    except (TypeError, ValueError):
        return repr(fn)
    out = out if isinstance(out, list | tuple) else (out,)
    body = ", ".join(format_value(e) if not isinstance(e, int) else str(e) for e in out)
    return f"lambda {', '.join(names)}: ({body}{',' if len(out) == 1 else ''})"
