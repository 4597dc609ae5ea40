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


class IndexMap:
    """An index map as data: `params` (Vars) to `outputs` (PrimExprs of them), callable like the
    Python function it was made from. Traces record index maps this way, so they print and
    serialise whatever function (a lambda, a closure over `*idx`) the rule passed."""

    __slots__ = ("params", "outputs")

    def __init__(self, params, outputs):
        self.params, self.outputs = tuple(params), tuple(outputs)

    @staticmethod
    def from_func(fn, ndim: int, dtypes=None) -> IndexMap:
        """Trace `fn` on `ndim` fresh index variables `i0, i1, ...` (of `dtypes`, default int32)."""
        import inspect

        if isinstance(fn, IndexMap):
            return fn
        names = [f"i{k}" for k in range(ndim)]
        try:  # the function's own parameter names when it has them
            own = list(inspect.signature(fn).parameters.values())
            if len(own) == ndim and all(p.kind == p.POSITIONAL_OR_KEYWORD for p in own):
                names = [p.name for p in own]
        except (TypeError, ValueError):
            pass
        params = [Var(name, dtypes[k] if dtypes else "int32") for k, name in enumerate(names)]
        out = fn(*params)
        out = out if isinstance(out, list | tuple) else (out,)
        return IndexMap(params, out)

    def __call__(self, *indices):
        from ..functor import substitute
        from ..generic import convert

        if len(indices) != len(self.params):
            raise TypeError(f"the index map takes {len(self.params)} indices, got {len(indices)}")
        vmap = {p: convert(i) if not isinstance(i, PrimExpr) else i for p, i in zip(self.params, indices)}
        return tuple(substitute(convert(e) if not isinstance(e, PrimExpr) else e, vmap) for e in self.outputs)

    def __repr__(self) -> str:
        body = ", ".join(format_value(e) if not isinstance(e, int) else str(e) for e in self.outputs)
        names = ", ".join(p.name for p in self.params)
        return f"lambda {names}: ({body}{',' if len(self.outputs) == 1 else ''})"


def is_rv(x) -> bool:
    return isinstance(x, BlockRV | LoopRV)


@dataclasses.dataclass
class Instruction:
    """One primitive call: method name, arguments (handles inside), and the handles it made.

    A sampling instruction (sampling.py: `sample_perfect_tile`, ...) also holds the `decision`
    it took (JSON-able) and `info`, the `SampleInfo` of its choices (for mutations)."""

    name: str
    args: tuple
    kwargs: dict
    outputs: object  # a handle, a list/tuple of handles, a sampled value, or None
    decision: object = None
    info: object = None

    @property
    def is_sample(self) -> bool:
        return self.name in SAMPLE_INSTRUCTIONS


# the sampling primitives (sampling.py): replayed with their recorded decision
SAMPLE_INSTRUCTIONS = ("sample_perfect_tile", "sample_categorical", "sample_compute_location")


class Trace:
    """The list of primitives a Schedule applied, in order."""

    def __init__(self, insts=None):
        self.insts: list[Instruction] = list(insts or [])
        self._known: set = set()  # ids of the handles the instructions made
        self.num_samples = 0
        self.free_vars_by_name = False
        self._json_free_vars: dict = {}
        for inst in self.insts:
            self._note(inst)

    def _note(self, inst: Instruction) -> None:
        _collect_ids(inst.outputs, self._known)
        if inst.is_sample:
            self.num_samples += 1

    def append(self, name: str, args: tuple, kwargs: dict, outputs, decision=None, info=None) -> None:
        inst = Instruction(name, tuple(args), dict(kwargs), outputs, decision, info)
        self.insts.append(inst)
        self._note(inst)

    def knows(self, rv) -> bool:
        """Whether handle `rv` was made by one of the instructions (else replay cannot map it)."""
        return id(rv) in self._known

    def copy(self) -> Trace:
        new = Trace(self.insts)
        new.free_vars_by_name = self.free_vars_by_name
        new._json_free_vars = self._json_free_vars
        return new

    def __len__(self) -> int:
        return len(self.insts)

    def decisions(self) -> list:
        """(instruction index, decision) of the sampling instructions, in order."""
        return [(k, inst.decision) for k, inst in enumerate(self.insts) if inst.is_sample]

    def to_json(self) -> dict:
        """A JSON-able form (handles by number, expressions structured); see trace_json.py."""
        from .trace_json import trace_to_json

        return trace_to_json(self)

    @staticmethod
    def from_json(obj) -> Trace:
        """The trace `to_json` wrote (its free variables resolve by name when applied)."""
        from .trace_json import trace_from_json

        return trace_from_json(obj)

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

        resolve = None
        if self.free_vars_by_name:  # read from JSON: its shape variables are the function's
            from .trace_json import free_var_resolver

            resolve = free_var_resolver(sch, self)
        for inst in self.insts:
            args = tuple(remap(a) for a in inst.args)
            kwargs = {k: remap(v) for k, v in inst.kwargs.items()}
            if resolve is not None:
                args, kwargs = resolve(args), resolve(kwargs)
            if inst.is_sample:  # the recorded decision, whatever the schedule's sampler
                result = sch._replay_sample(inst.name, args, kwargs, inst.decision)
            else:
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
            if inst.is_sample:
                args.append(f"decision={inst.decision!r}")
            call = f"sch.{inst.name}({', '.join(args)})"
            outs = inst.outputs
            if inst.is_sample and not is_rv(outs):  # a sampled value: later instructions hold it
                lines.append(f"v{len(names)} = {call}")
                names[id(inst)] = ""
                continue
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
        if self._depth == 0:
            self.__dict__.pop("_record_as", None)
            _name_unknown_handles(self, args, kwargs)
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
            # a primitive may record an argument in a replayable form (an index map as IndexMap)
            swap = self.__dict__.pop("_record_as", None)
            if swap is not None:
                args = tuple(swap[1] if a is swap[0] else a for a in args)
                kwargs = {k: swap[1] if v is swap[0] else v for k, v in kwargs.items()}
            self._trace.append(method.__name__, args, kwargs, result)
        return result

    return wrapper


def _collect_ids(x, out: set) -> None:
    if is_rv(x):
        out.add(id(x))
    elif isinstance(x, list | tuple):
        for y in x:
            _collect_ids(y, out)


def _name_unknown_handles(sch, args, kwargs) -> None:
    """Record look-ups for handles the trace did not make (a rule may build a LoopRV from a
    loop's Var, as `dlight`'s block infos do), so the trace replays on a fresh schedule."""
    rvs: list = []
    _collect_rvs((args, kwargs), rvs)
    for rv in rvs:
        if sch._trace.knows(rv):
            continue
        if isinstance(rv, BlockRV):
            try:
                name = sch._name(rv)
                sch._block_path(rv)
            except ScheduleError:
                continue  # the primitive reports the stale handle
            sch._trace.append("get_block", (name,), _func_kw(sch, rv), rv)
            continue
        _name_loop(sch, rv)


def _collect_rvs(x, out: list) -> None:
    if is_rv(x):
        out.append(x)
    elif isinstance(x, list | tuple):
        for y in x:
            _collect_rvs(y, out)
    elif isinstance(x, dict):
        for y in x.values():
            _collect_rvs(y, out)


def _name_loop(sch, rv: LoopRV) -> None:
    """Record `get_block(b)` and `get_loops(b)` for the first block under loop `rv`."""
    from ..stmt import BlockRealize
    from .state import find_block_path, find_loop_path, loops_above, walk

    if rv.func_name not in sch.mod:
        return
    func = sch.mod[rv.func_name]
    path = find_loop_path(func.body, rv.var)
    if path is None:
        return
    realize = next((s for s in walk(path[-1].body) if isinstance(s, BlockRealize)), None)
    if realize is None:
        return
    name = realize.block.name_hint
    loops = loops_above(find_block_path(func.body, name))
    if not any(lp.loop_var is rv.var for lp in loops):
        return
    block = BlockRV(name, rv.func_name)
    outs = [rv if lp.loop_var is rv.var else LoopRV(lp.loop_var, rv.func_name) for lp in loops]
    sch._trace.append("get_block", (name,), _func_kw(sch, rv), block)
    sch._trace.append("get_loops", (block,), {}, outs)


def _func_kw(sch, rv) -> dict:
    return {} if rv.func_name == sch._func_name else {"func_name": rv.func_name}


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
    if not isinstance(old, list | tuple):  # a sampled value
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
    if isinstance(x, IndexMap):
        return repr(x)
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
