"""`te_schedule_to_module`: replay a recorded TE schedule on a `tir.Schedule`.

The function is `te.create_prim_func(args)`: one block per compute operation, named after
it, inside one loop per axis (spatial axes, then reduce axes). Each TE axis maps to the
LoopRV of its loop and each split/fuse result to the LoopRVs tir.Schedule returns; the
calls replay in the order they were made, except that the calls on a stage that is later
attached by `compute_at` wait until it is attached (compute_at builds that stage's loops
anew, so TVM's "the stage's own loop transformations apply wherever it is attached" needs
them applied afterwards).

>>> import graphc, numpy as np
>>> from graphc import te
>>> m = te.var("m")
>>> A = te.placeholder((m,), name="A")
>>> B = te.compute((m,), lambda i: A[i] + 1.0, name="B")
>>> C = te.compute((m,), lambda i: B[i] * 2.0, name="C")
>>> s = te.create_schedule(C.op)
>>> xo, xi = s[C].split(C.op.axis[0], factor=4)
>>> s[B].compute_at(s[C], xo)
>>> mod = te_schedule_to_module(s, [A, C], name="chain")
>>> a, c = np.arange(10, dtype="float32"), np.zeros(10, "float32")
>>> graphc.build(mod, target="llvm")["chain"](a, c)
>>> bool((c == (a + 1) * 2).all())
True
"""

from __future__ import annotations

from ...errors import GraphcError, ScheduleError
from ...ir.module import IRModule
from ...tir.schedule import Schedule as TIRSchedule
from ..create_prim_func import create_prim_func
from ..tensor import ComputeOp, Tensor
from .record import Call, Schedule, Stage, _ordered_ops


class _Replay:
    """The tir.Schedule being built and the LoopRV/BlockRV each TE axis/stage stands for."""

    def __init__(self, sch: TIRSchedule, te_sch: Schedule):
        self.sch, self.te_sch = sch, te_sch
        self.loops: dict = {}  # id(axis) -> LoopRV
        self.blocks: dict = {}  # id(stage) -> BlockRV
        self.pending = {id(c.stage) for c in te_sch.calls if c.method == "compute_at"}
        self.waiting: dict = {}  # id(stage) -> calls waiting for that stage's compute_at

    # -- handles --------------------------------------------------------------------------
    def block(self, stage: Stage):
        if id(stage) not in self.blocks:
            self.blocks[id(stage)] = self.sch.get_block(stage.op.name)
            self.map_roots(stage)
        return self.blocks[id(stage)]

    def map_roots(self, stage: Stage) -> None:
        """Map the stage's TE axes to the innermost loops around its block, by position."""
        axes = list(stage.op.axis) + list(stage.op.reduce_axis)
        loops = self.sch.get_loops(self.blocks[id(stage)])
        if len(loops) < len(axes):
            raise ScheduleError(
                f"block {stage.op.name} has {len(loops)} loops around it, expected one per axis ({len(axes)})"
            )
        for axis, loop in zip(axes, loops[len(loops) - len(axes) :]):
            self.loops[id(axis)] = loop

    def loop(self, stage: Stage, axis):
        self.block(stage)
        return self.loops[id(axis)]

    # -- the replay order -----------------------------------------------------------------
    def schedule(self, call: Call) -> None:
        """Run `call` now, or park it until the compute_at it depends on has run."""
        if call.stage.inlined and call.method != "compute_inline":
            return  # TVM ignores the loops of an inlined stage; so do we
        if call.method != "compute_at" and id(call.stage) in self.pending:
            self.waiting.setdefault(id(call.stage), []).append(call)
            return
        if call.method == "compute_at" and id(call.args[0]) in self.pending:
            self.waiting.setdefault(id(call.args[0]), []).append(call)
            return
        self.run(call)
        if call.method == "compute_at":
            self.pending.discard(id(call.stage))
            for later in self.waiting.pop(id(call.stage), []):
                self.schedule(later)

    def run(self, call: Call) -> None:
        try:
            getattr(self, f"do_{call.method}")(call.stage, *call.args, outputs=call.outputs)
        except GraphcError as e:
            raise ScheduleError(f"{call.text}: {e}") from e

    # -- one method per Stage call --------------------------------------------------------
    def do_split(self, stage, parent, size, by_factor, outputs):
        factors = [None, size] if by_factor else [size, None]
        new = self.sch.split(self.loop(stage, parent), factors=factors)
        for axis, loop in zip(outputs, new):
            self.loops[id(axis)] = loop

    def do_tile(self, stage, x, y, x_size, y_size, outputs):
        xo, yo, xi, yi = outputs
        self.do_split(stage, x, x_size, True, outputs=(xo, xi))
        self.do_split(stage, y, y_size, True, outputs=(yo, yi))
        self.sch.reorder(*(self.loops[id(a)] for a in outputs))

    def do_fuse(self, stage, *axes, outputs):
        self.loops[id(outputs[0])] = self.sch.fuse(*(self.loop(stage, a) for a in axes))

    def do_reorder(self, stage, *axes, outputs):
        self.sch.reorder(*(self.loop(stage, a) for a in axes))

    def do_vectorize(self, stage, axis, outputs):
        self.sch.vectorize(self.loop(stage, axis))

    def do_parallel(self, stage, axis, outputs):
        self.sch.parallel(self.loop(stage, axis))

    def do_unroll(self, stage, axis, outputs):
        self.sch.unroll(self.loop(stage, axis))

    def do_bind(self, stage, axis, tag, outputs):
        self.sch.bind(self.loop(stage, axis), tag)

    def do_compute_at(self, stage, parent, axis, outputs):
        # Keep unit loops only when later calls need this stage's loops (TVM keeps them all).
        keep = any(
            c.stage is stage and c.method != "compute_at" or c.method == "compute_at" and c.args[0] is stage
            for c in self.te_sch.calls
        )
        block = self.block(stage)
        self.sch.compute_at(block, self.loop(parent, axis), preserve_unit_loops=keep)
        if keep:
            self.map_roots(stage)

    def do_compute_inline(self, stage, outputs):
        self.sch.compute_inline(self.block(stage))


def _replay_order(calls: list) -> list:
    """`calls`, with each compute_at moved after the last call on its parent stage.

    TVM attaches a stage to an axis wherever that axis ends up, so the parent's later
    reorder/fuse of other axes must not see the attached nest; an attach axis that the
    parent splits or fuses later keeps its place in the order (tir.Schedule moves the nest).
    """
    order, moved = list(calls), {}  # moved: id(parent stage) -> its compute_at calls moved so far
    for call in calls:
        if call.method != "compute_at":
            continue
        parent, axis = call.args
        if not any(a is axis for a in parent.leaf_iter_vars):
            continue
        order.remove(call)
        done = moved.setdefault(id(parent), [])
        after = [k for k, c in enumerate(order) if c.stage is parent or any(c is d for d in done)]
        order.insert(max(after, default=-1) + 1, call)
        done.append(call)
    return order


def _check_names(te_sch: Schedule, args: list) -> None:
    tensors = [a for a in args if isinstance(a, Tensor)]
    ops = [op for op in _ordered_ops([t.op for t in tensors]) if isinstance(op, ComputeOp)]
    touched = {id(c.stage.op) for c in te_sch.calls} | {
        id(c.args[0].op) for c in te_sch.calls if c.method == "compute_at"
    }
    for stage in te_sch.stages:
        if id(stage.op) not in touched:
            continue
        call = next(c for c in te_sch.calls if c.stage is stage or c.args and c.args[0] is stage)
        same = [op for op in ops if op.name == stage.op.name]
        if not any(op is stage.op for op in same):
            raise ScheduleError(
                f"{call.text}: {stage.op.name} is not computed by the function of these arguments; "
                "list its output (or a tensor that depends on it) among the arguments"
            )
        if len(same) > 1:
            raise ScheduleError(
                f"{call.text}: {len(same)} operations are named {stage.op.name!r}, so its block cannot be "
                "told apart; give the te.compute calls distinct names"
            )


def te_schedule_to_module(s: Schedule, args, name: str = "main") -> IRModule:
    """The scheduled block-form IRModule `{name: PrimFunc}` of TE schedule `s` over `args`.

    `args` are the function's arguments as for `te.create_prim_func` (input and output
    tensors, scalar vars). Errors in the replay are ScheduleErrors naming the TE call.
    """
    if not isinstance(s, Schedule):
        raise ScheduleError(
            f"te_schedule_to_module needs a te.create_schedule schedule, got {type(s).__name__}"
        )
    args = list(args) if isinstance(args, list | tuple) else [args]
    _check_names(s, args)
    func = create_prim_func(args).with_attr("global_symbol", name)
    sch = TIRSchedule(IRModule({name: func}), func_name=name)
    replay = _Replay(sch, s)
    for call in _replay_order(s.calls):
        replay.schedule(call)
    if replay.waiting:  # compute_at cycles are refused when recorded; this is a safety net
        stuck = next(iter(replay.waiting.values()))[0]
        raise ScheduleError(f"{stuck.text}: its stage's compute_at never became possible")
    return sch.mod


__all__ = ["te_schedule_to_module"]
