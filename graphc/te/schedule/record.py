"""The legacy TE schedule (`te.create_schedule`): stages that record loop transformations.

A `Schedule` holds one `Stage` per compute operation; each Stage method checks its
arguments against the stage's current axes, records the call and returns new axis
handles at once. Nothing is transformed here: `te_schedule_to_module` replays the
record on a `tir.Schedule` over `te.create_prim_func`.

>>> from graphc import te
>>> m = te.var("m")
>>> A = te.placeholder((m,), name="A")
>>> B = te.compute((m,), lambda i: A[i] * 2.0, name="B")
>>> s = te.create_schedule(B.op)
>>> xo, xi = s[B].split(B.op.axis[0], factor=32)
>>> xo.var.name, xi.dom.extent.value
('i.outer', 32)
>>> print(s)
s[B].split(i, factor=32)
"""

from __future__ import annotations

import dataclasses

from ...errors import ScheduleError
from ...tir.expr import IntImm, PrimExpr, Range, Var, const, convert
from ...tir.op import ceildiv
from ...tir.stmt import IterType, IterVar
from ..iter_var import ExprIterVar
from ..tensor import ComputeOp, Operation, PlaceholderOp, Tensor


@dataclasses.dataclass(eq=False)
class Call:
    """One recorded stage method call: arguments normalized, the axes it created, its source text."""

    stage: Stage
    method: str
    args: tuple
    outputs: tuple
    text: str


def _ordered_ops(roots: list) -> list:
    """Every operation reachable from `roots`, producers first."""
    order, seen = [], set()

    def visit(op):
        if id(op) in seen:
            return
        seen.add(id(op))
        for t in op.input_tensors:
            visit(t.op)
        order.append(op)

    for op in roots:
        visit(op)
    return order


def _as_op(x, what: str) -> Operation:
    if isinstance(x, Tensor):
        return x.op
    if isinstance(x, Operation):
        return x
    raise ScheduleError(f"{what}: expected a te Tensor or operation (C or C.op), got {type(x).__name__}")


class Schedule:
    """The stages of every operation that `outputs` depend on, and the calls recorded on them.

    `s[C]` or `s[C.op]` is the Stage of compute operation C.
    """

    def __init__(self, outputs):
        roots = list(outputs) if isinstance(outputs, list | tuple) else [outputs]
        if not roots:
            raise ScheduleError("te.create_schedule needs at least one operation, e.g. create_schedule(C.op)")
        self.outputs = [_as_op(r, "te.create_schedule") for r in roots]
        self.stages = [Stage(self, op) for op in _ordered_ops(self.outputs) if isinstance(op, ComputeOp)]
        self._stage_of = {id(st.op): st for st in self.stages}
        self._owner = {id(iv): st for st in self.stages for iv in st.leaf_iter_vars}
        self._consumed: dict = {}  # id(axis) -> how it stopped being a leaf ("was split into ...")
        self.calls: list[Call] = []

    def __getitem__(self, x) -> Stage:
        op = _as_op(x, "s[...]")
        stage = self._stage_of.get(id(op))
        if stage is not None:
            return stage
        if isinstance(op, PlaceholderOp):
            raise ScheduleError(
                f"s[{op.name}]: {op.name} is a placeholder (an input); it has no loops to schedule"
            )
        names = ", ".join(st.op.name for st in self.stages)
        raise ScheduleError(
            f"s[{op.name}]: {op.name} is not computed by this schedule's outputs (its stages: {names}); "
            "pass the final operations to te.create_schedule"
        )

    def __repr__(self) -> str:
        return "\n".join(c.text for c in self.calls) or "<te.Schedule with no calls>"

    # -- bookkeeping shared by the stages -------------------------------------------------
    def _new_axis(self, stage: Stage, name: str, extent, iter_type: IterType) -> ExprIterVar:
        dom = None if extent is None else Range(const(0, extent.dtype), extent)
        axis = ExprIterVar(dom, Var(name, "int32" if extent is None else extent.dtype), iter_type)
        self._owner[id(axis)] = stage
        return axis


def _extent(axis: IterVar):
    return None if axis.dom is None else axis.dom.extent


def _fold(e: PrimExpr) -> PrimExpr:
    """Constant-fold small extent expressions so domains of constant loops stay IntImm."""
    from ...tir.arith import simplify

    return simplify(e)


def _describe(x) -> str:
    if isinstance(x, Stage):
        return f"s[{x.op.name}]"
    if isinstance(x, IterVar) and x.thread_tag:
        return f"te.thread_axis({x.thread_tag!r})"
    if isinstance(x, IterVar):
        return x.var.name
    if isinstance(x, IntImm):
        return str(x.value)
    return repr(x) if isinstance(x, str) else str(x)


class Stage:
    """The schedule of one compute operation: its leaf axes and the calls that made them.

    Axes are TE IterVars: `C.op.axis[i]`, `C.op.reduce_axis[i]`, or those split/fuse/tile
    returned. Every method checks its axes are current leaves of this stage.

    >>> from graphc import te
    >>> A = te.placeholder((64, 32), name="A")
    >>> C = te.compute((64, 32), lambda i, j: A[i, j] + 1.0, name="C")
    >>> s = te.create_schedule(C.op)
    >>> xo, yo, xi, yi = s[C].tile(C.op.axis[0], C.op.axis[1], x_factor=16, y_factor=8)
    >>> f = s[C].fuse(xo, yo)
    >>> s[C].parallel(f)
    >>> [a.var.name for a in s[C].leaf_iter_vars], f.dom.extent.value
    (['i.outer.j.outer.fused', 'i.inner', 'j.inner'], 16)
    >>> s[C].split(xo, factor=2)
    Traceback (most recent call last):
    ...
    graphc.errors.ScheduleError: s[C].split(i.outer, factor=2): axis i.outer was fused into ...
    """

    def __init__(self, schedule: Schedule, op: ComputeOp):
        self.schedule, self.op = schedule, op
        self.leaf_iter_vars = list(op.axis) + list(op.reduce_axis)
        self.attach = None  # (parent Stage, axis) after compute_at
        self.inlined = False

    def __repr__(self) -> str:
        return f"Stage({self.op.name})"

    # -- checks ---------------------------------------------------------------------------
    def _text(self, method: str, *args, **kwargs) -> str:
        parts = [_describe(a) for a in args] + [f"{k}={_describe(v)}" for k, v in kwargs.items()]
        return f"s[{self.op.name}].{method}({', '.join(parts)})"

    def _check_open(self, text: str) -> None:
        if self.inlined:
            raise ScheduleError(f"{text}: {self.op.name} was inlined by compute_inline; it has no loops left")

    def _leaf(self, axis, text: str) -> IterVar:
        """`axis` if it is a current leaf axis of this stage, else a ScheduleError saying why not."""
        if not isinstance(axis, IterVar):
            raise ScheduleError(
                f"{text}: expected an axis ({self.op.name}.op.axis[i], .reduce_axis[i] or one returned by "
                f"split/fuse/tile), got {type(axis).__name__}"
            )
        owner = self.schedule._owner.get(id(axis))
        if owner is None:
            raise ScheduleError(f"{text}: axis {axis.var.name} is not an axis of any stage of this schedule")
        if owner is not self:
            raise ScheduleError(
                f"{text}: axis {axis.var.name} belongs to stage {owner.op.name}, not {self.op.name}"
            )
        if not any(a is axis for a in self.leaf_iter_vars):
            how = self.schedule._consumed.get(id(axis), "is no longer a loop")
            raise ScheduleError(f"{text}: axis {axis.var.name} {how}; use the axes that call returned")
        return axis

    def _record(self, method: str, args: tuple, outputs: tuple, text: str) -> None:
        self.schedule.calls.append(Call(self, method, args, outputs, text))

    def _replace(self, old: list, new: list, how: str) -> None:
        pos = min(next(k for k, a in enumerate(self.leaf_iter_vars) if a is o) for o in old)
        for o in old:
            self.schedule._consumed[id(o)] = how
        kept = [a for a in self.leaf_iter_vars if not any(a is o for o in old)]
        self.leaf_iter_vars = kept[:pos] + list(new) + kept[pos:]

    # -- loop transformations -------------------------------------------------------------
    def _split(self, parent, factor, nparts, text: str) -> tuple:
        self._check_open(text)
        parent = self._leaf(parent, text)
        if (factor is None) == (nparts is None):
            raise ScheduleError(f"{text}: give exactly one of factor= and nparts=")
        size = convert(factor if factor is not None else nparts)
        if isinstance(size, IntImm) and size.value <= 0:
            raise ScheduleError(f"{text}: the split size must be positive, got {size.value}")
        ext = _extent(parent)
        if ext is None:
            outer_ext = inner_ext = None
        elif factor is not None:
            outer_ext, inner_ext = _fold(ceildiv(ext, size)), size
        else:
            outer_ext, inner_ext = size, _fold(ceildiv(ext, size))
        name, kind = parent.var.name, parent.iter_type
        outer = self.schedule._new_axis(self, f"{name}.outer", outer_ext, kind)
        inner = self.schedule._new_axis(self, f"{name}.inner", inner_ext, kind)
        self._replace([parent], [outer, inner], f"was split into {name}.outer, {name}.inner")
        return outer, inner, size

    def split(self, parent, factor=None, nparts=None) -> tuple:
        """Split `parent` into (outer, inner): inner of extent `factor`, or outer of extent `nparts`.

        A factor that may not divide the extent leaves a guard on the body, as in TVM.
        """
        sizes = {"factor": factor, "nparts": nparts}
        text = self._text("split", parent, **{k: v for k, v in sizes.items() if v is not None})
        outer, inner, size = self._split(parent, factor, nparts, text)
        self._record("split", (parent, size, factor is not None), (outer, inner), text)
        return outer, inner

    def tile(self, x_parent, y_parent, x_factor, y_factor) -> tuple:
        """Split two axes and order the results (x_outer, y_outer, x_inner, y_inner)."""
        text = self._text("tile", x_parent, y_parent, x_factor=x_factor, y_factor=y_factor)
        if x_parent is y_parent:
            raise ScheduleError(f"{text}: the two axes must differ")
        self._leaf(y_parent, text)
        xo, xi, xs = self._split(x_parent, x_factor, None, text)
        yo, yi, ys = self._split(y_parent, y_factor, None, text)
        self._reorder([xo, yo, xi, yi])
        self._record("tile", (x_parent, y_parent, xs, ys), (xo, yo, xi, yi), text)
        return xo, yo, xi, yi

    def fuse(self, *args) -> IterVar:
        """Fuse consecutive axes (outermost first) into one axis."""
        if len(args) == 1 and isinstance(args[0], list | tuple):
            args = tuple(args[0])
        text = self._text("fuse", *args)
        self._check_open(text)
        if not args:
            raise ScheduleError(f"{text}: give at least one axis to fuse")
        axes = [self._leaf(a, text) for a in args]
        if len({id(a) for a in axes}) != len(axes):
            raise ScheduleError(f"{text}: an axis appears more than once")
        if len(axes) == 1:
            return axes[0]
        ext = None
        if all(_extent(a) is not None for a in axes):
            ext = _extent(axes[0])
            for a in axes[1:]:
                ext = ext * _extent(a)
            ext = _fold(ext)
        reduce = any(a.iter_type == IterType.COMM_REDUCE for a in axes)
        name = ".".join(a.var.name for a in axes) + ".fused"
        kind = IterType.COMM_REDUCE if reduce else IterType.DATA_PAR
        fused = self.schedule._new_axis(self, name, ext, kind)
        self._replace(axes, [fused], f"was fused into {name}")
        self._record("fuse", tuple(axes), (fused,), text)
        return fused

    def _reorder(self, axes: list) -> None:
        slots = sorted(k for k, a in enumerate(self.leaf_iter_vars) if any(a is x for x in axes))
        for k, a in zip(slots, axes):
            self.leaf_iter_vars[k] = a

    def reorder(self, *args) -> None:
        """Put the given axes in this order (the other axes keep their places)."""
        if len(args) == 1 and isinstance(args[0], list | tuple):
            args = tuple(args[0])
        text = self._text("reorder", *args)
        self._check_open(text)
        axes = [self._leaf(a, text) for a in args]
        if len({id(a) for a in axes}) != len(axes):
            raise ScheduleError(f"{text}: an axis appears more than once")
        self._reorder(axes)
        self._record("reorder", tuple(axes), (), text)

    def _loop_kind(self, method: str, axis) -> None:
        text = self._text(method, axis)
        self._check_open(text)
        self._record(method, (self._leaf(axis, text),), (), text)

    def vectorize(self, axis) -> None:
        """Vectorize `axis` (a spatial axis)."""
        self._loop_kind("vectorize", axis)

    def parallel(self, axis) -> None:
        """Run `axis` in parallel on the CPU (a spatial axis)."""
        self._loop_kind("parallel", axis)

    def unroll(self, axis) -> None:
        """Unroll `axis`."""
        self._loop_kind("unroll", axis)

    def bind(self, axis, thread_ivar) -> None:
        """Bind `axis` to a GPU thread axis: `te.thread_axis("blockIdx.x")` or the tag itself."""
        text = self._text("bind", axis, thread_ivar)
        self._check_open(text)
        axis = self._leaf(axis, text)
        tag = thread_ivar if isinstance(thread_ivar, str) else getattr(thread_ivar, "thread_tag", "")
        if not tag:
            raise ScheduleError(
                f"{text}: expected a thread axis such as te.thread_axis('threadIdx.x'), got {thread_ivar!r}"
            )
        self._record("bind", (axis, tag), (), text)

    # -- placement ------------------------------------------------------------------------
    def compute_at(self, parent: Stage, scope) -> None:
        """Compute this stage inside loop `scope` of stage `parent` (one of its consumers)."""
        text = self._text("compute_at", parent, scope)
        self._check_open(text)
        if not isinstance(parent, Stage) or parent.schedule is not self.schedule:
            raise ScheduleError(f"{text}: the first argument must be a stage of this schedule, like s[C]")
        if parent is self:
            raise ScheduleError(f"{text}: a stage cannot be computed at its own axis")
        if self.attach is not None:
            raise ScheduleError(f"{text}: {self.op.name} is already attached by compute_at; attach it once")
        parent._check_open(text)
        scope = parent._leaf(scope, text)
        up = parent
        while up.attach is not None:
            if up.attach[0] is self:
                raise ScheduleError(f"{text}: {parent.op.name} is itself attached inside {self.op.name}")
            up = up.attach[0]
        self.attach = (parent, scope)
        self._record("compute_at", (parent, scope), (), text)

    def compute_root(self) -> None:
        """Compute this stage in its own loop nest at the top (undoes compute_at; the default)."""
        text = self._text("compute_root")
        self._check_open(text)
        if self.attach is not None:
            calls = self.schedule.calls
            self.schedule.calls = [c for c in calls if not (c.stage is self and c.method == "compute_at")]
            self.attach = None

    def __getattr__(self, name: str):
        op = self.__dict__.get("op")
        if name in _UNSUPPORTED and op is not None:
            raise ScheduleError(
                f"s[{op.name}].{name} is not supported by graphc's TE schedules; build the function with "
                f"te.create_prim_func and use tir.Schedule (sch.{_UNSUPPORTED[name]})"
            )
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def compute_inline(self) -> None:
        """Inline this (elementwise) stage into its consumers; its loop calls are dropped, as in TVM."""
        text = self._text("compute_inline")
        self._check_open(text)
        if self.attach is not None:
            raise ScheduleError(f"{text}: {self.op.name} is attached by compute_at; it cannot be inlined too")
        inner = [st.op.name for st in self.schedule.stages if st.attach and st.attach[0] is self]
        if inner:
            raise ScheduleError(f"{text}: {', '.join(inner)} is computed at an axis of {self.op.name}")
        self.inlined = True
        self._record("compute_inline", (), (), text)


_UNSUPPORTED = {
    "rfactor": "rfactor", "cache_read": "cache_read", "cache_write": "cache_write",
    "set_scope": "set_scope", "storage_align": "storage_align", "tensorize": "tensorize",
    "pragma": "annotate", "double_buffer": "annotate", "prefetch": "annotate",
    "env_threads": "bind", "set_store_predicate": "split", "transform_layout": "transform_layout",
}  # fmt: skip


def create_schedule(ops) -> Schedule:
    """A TE schedule of the operations `ops` (`C.op`, `[C.op]`, or tensors) and their inputs.

    >>> from graphc import te
    >>> A = te.placeholder((8,), name="A")
    >>> B = te.compute((8,), lambda i: A[i] + 1.0, name="B")
    >>> s = te.create_schedule([B.op])
    >>> s[B] is s[B.op], [st.op.name for st in s.stages]
    (True, ['B'])
    """
    return Schedule(ops)


__all__ = ["Call", "Schedule", "Stage", "create_schedule"]
