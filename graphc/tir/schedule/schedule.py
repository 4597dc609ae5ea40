"""`tir.Schedule`: apply loop and block transformations to the PrimFuncs of an IRModule.

The IR is immutable, so the schedule holds the current IRModule; each primitive builds a
new PrimFunc and commits it only when every precondition holds. An illegal primitive
raises ScheduleError and leaves the schedule exactly as it was. Blocks are named by
handles (BlockRV, by block name) and loops by LoopRV (by the loop's Var).

>>> from graphc import tir
>>> A = tir.decl_buffer((8,), "float32", "A"); B = tir.decl_buffer((8,), "float32", "B")
>>> i, vi = tir.Var("i"), tir.Var("vi")
>>> blk = tir.Block((tir.IterVar(tir.Range.make(8), vi),), (), (), "B", B.vstore([vi], A[vi] * 2.0))
>>> loop = tir.For(i, tir.const(0), tir.const(8), tir.ForKind.SERIAL,
...                tir.BlockRealize((i,), tir.const(True), blk))
>>> root = tir.BlockRealize((), tir.const(True), tir.Block((), (), (), "root", loop))
>>> a, b = tir.Var("a", "handle"), tir.Var("b", "handle")
>>> sch = Schedule(tir.PrimFunc([a, b], root, buffer_map={a: A, b: B}))
>>> (l0,) = sch.get_loops(sch.get_block("B"))
>>> l1, l2 = sch.split(l0, factors=[None, 4])
>>> print(sch.trace)
b0 = sch.get_block("B")
l1, = sch.get_loops(b0)
l2, l3 = sch.split(l1, factors=[None, 4])
"""

from __future__ import annotations

from ...errors import ScheduleError
from ...ir.module import IRModule
from ..function import PrimFunc
from . import annotate as _annotate
from . import blocks as _blocks
from . import for_kind as _for_kind
from . import loops as _loops
from .sampling import SamplingPrimitives, current_sampler
from .schedule_blocks import BlockPrimitives
from .schedule_layout import LayoutPrimitives
from .state import check_exists, find_block_path, find_loop_path, loops_above
from .trace import BlockRV, LoopRV, Trace
from .trace import traced as _primitive


class Schedule(BlockPrimitives, LayoutPrimitives, SamplingPrimitives):
    """A scheduling session over an IRModule (or a single PrimFunc, named "main").

    `sampler` takes the decisions of the sampling instructions (sampling.py); None: the one
    `use_sampler` set around this call, else a DefaultSampler (the rules' own decisions)."""

    def __init__(
        self, mod, func_name: str | None = None, debug_mask=None, error_render_level=None, sampler=None
    ):
        if isinstance(mod, PrimFunc):
            mod = IRModule({"main": mod})
        if not isinstance(mod, IRModule):
            raise ScheduleError(f"tir.Schedule needs an IRModule or a PrimFunc, got {type(mod).__name__}")
        self._mod = mod.copy()
        self._trace = Trace()
        self._depth = 0
        self.sampler = sampler if sampler is not None else current_sampler()
        prim_funcs = [gv.name_hint for gv, f in mod.items() if isinstance(f, PrimFunc)]
        if func_name is None:
            if "main" in prim_funcs or len(prim_funcs) != 1:
                func_name = "main"
            else:
                func_name = prim_funcs[0]
        self._func_name = None
        self._aliases: dict = {}  # (func_name, old block name) -> new name, after a rename
        if prim_funcs:
            self.work_on(func_name)

    # -- state ---------------------------------------------------------------------------
    @property
    def mod(self) -> IRModule:
        """The current IRModule (a new object after every successful primitive)."""
        return self._mod

    @property
    def trace(self) -> Trace:
        """The primitives applied so far, as replayable Python (`trace.apply_to(other_sch)`)."""
        return self._trace

    @property
    def func_name(self) -> str:
        return self._func_name

    def work_on(self, func_name: str) -> None:
        """Make `func_name` the function that handles without an explicit function refer to."""
        if func_name not in self._mod or not isinstance(self._mod[func_name], PrimFunc):
            names = ", ".join(gv.name_hint for gv, f in self._mod.items() if isinstance(f, PrimFunc))
            raise ScheduleError(f"the module has no PrimFunc named {func_name!r} (it has: {names or 'none'})")
        self._func_name = func_name

    def copy(self) -> Schedule:
        """An independent schedule with the same module and trace; handles stay valid in both."""
        new = Schedule.__new__(Schedule)
        new._mod = self._mod.copy()
        new._trace = self._trace.copy()
        new._depth = 0
        new._sampler = self._sampler
        new._func_name = self._func_name
        new._aliases = dict(self._aliases)
        return new

    def show(self, **kwargs) -> None:
        """Print the current module."""
        self._mod.show(**kwargs)

    def _func(self, func_name: str | None = None) -> PrimFunc:
        name = func_name or self._func_name
        if name is None:
            raise ScheduleError("the schedule has no PrimFunc to work on")
        if name not in self._mod:
            raise ScheduleError(f"the module has no function named {name!r}")
        return self._mod[name]

    def _commit(self, func_name: str, new_func: PrimFunc) -> None:
        if new_func is self._mod[func_name]:
            return
        mod = self._mod.copy()
        mod[func_name] = new_func
        self._mod = mod

    def _loop_path(self, loop: LoopRV) -> list:
        if not isinstance(loop, LoopRV):
            raise ScheduleError(f"expected a loop handle (LoopRV), got {type(loop).__name__}")
        path = find_loop_path(self._func(loop.func_name).body, loop.var)
        if path is None:
            raise ScheduleError(
                f"loop {loop.var.name} no longer exists (it was split/fused or removed by an earlier "
                f"primitive); use the handles that primitive returned"
            )
        return path

    def _block(self, block) -> BlockRV:
        """`block` as a handle: a BlockRV, or a block name (as TVM accepts wherever it takes one)."""
        if isinstance(block, str):
            func = self._func()
            if find_block_path(func.body, block) is None:
                raise ScheduleError(f"function {self._func_name!r} has no block named {block!r}")
            return BlockRV(block, self._func_name)
        if not isinstance(block, BlockRV):
            raise ScheduleError(
                f"expected a block handle (BlockRV) or a block name, got {type(block).__name__}"
            )
        return block

    def _name(self, block) -> str:
        """The current name of the block `block` refers to (primitives may rename blocks)."""
        block = self._block(block)
        name = block.name
        while (block.func_name, name) in self._aliases:
            name = self._aliases[(block.func_name, name)]
        return name

    def _block_path(self, block) -> list:
        block = self._block(block)
        name = self._name(block)
        return check_exists(
            find_block_path(self._func(block.func_name).body, name),
            f"block {name!r} (it may have been inlined)",
            block.func_name,
        )

    def _check_loops(self, *loops: LoopRV) -> str:
        names = {lp.func_name for lp in loops}
        if len(names) > 1:
            raise ScheduleError("the loops given belong to different functions")
        for lp in loops:
            self._loop_path(lp)
        return loops[0].func_name

    # -- look-up -------------------------------------------------------------------------
    @_primitive
    def get_block(self, name: str, func_name: str | None = None) -> BlockRV:
        """The handle of the block called `name`."""
        func_name = func_name or self._func_name
        func = self._func(func_name)
        if find_block_path(func.body, name) is None:
            raise ScheduleError(f"function {func_name!r} has no block named {name!r}")
        return BlockRV(name, func_name)

    get_sblock = get_block

    @_primitive
    def get_loops(self, block: BlockRV) -> list:
        """The loops around `block` inside its enclosing block, outermost first."""
        block = self._block(block)
        path = self._block_path(block)
        return [LoopRV(lp.loop_var, block.func_name) for lp in loops_above(path)]

    @_primitive
    def get_child_blocks(self, rv) -> list:
        """The blocks directly inside a block or loop (not those nested in other blocks)."""
        rv = self._block(rv) if not isinstance(rv, LoopRV) else rv
        stmt = self.get(rv)
        return [BlockRV(r.block.name_hint, rv.func_name) for r in _blocks.child_realizes(stmt)]

    @_primitive
    def get_producers(self, block: BlockRV) -> list:
        """The blocks of the same scope that write a buffer `block` reads."""
        block = self._block(block)
        path = self._block_path(block)
        names = _blocks.producers(path)
        return [BlockRV(n, block.func_name) for n in names]

    @_primitive
    def get_consumers(self, block: BlockRV) -> list:
        """The blocks of the same scope that read a buffer `block` writes."""
        block = self._block(block)
        path = self._block_path(block)
        names = _blocks.consumers(path)
        return [BlockRV(n, block.func_name) for n in names]

    def get(self, rv):
        """The current Block (for a BlockRV) or For (for a LoopRV) node."""
        if isinstance(rv, BlockRV):
            return self._block_path(rv)[-1].block
        if isinstance(rv, LoopRV):
            return self._loop_path(rv)[-1]
        raise ScheduleError(f"expected a BlockRV or LoopRV, got {type(rv).__name__}")

    # -- loops ---------------------------------------------------------------------------
    @_primitive
    def split(
        self, loop: LoopRV, factors, preserve_unit_iters: bool = True, disable_predication: bool = False
    ) -> list:
        """Split `loop` into nested loops of extents `factors` (one may be None: inferred).

        When the factors over-cover the extent the block gets a `T.where` guard, unless
        `disable_predication` is set: then a symbolic extent is promised to be a multiple of the
        inner factors (constant extents must be covered exactly)."""
        fn = self._check_loops(loop)
        new_func, new_vars = _loops.split(
            self._func(fn), fn, loop.var, factors, preserve_unit_iters, disable_predication
        )
        self._commit(fn, new_func)
        return [LoopRV(v, fn) for v in new_vars]

    @_primitive
    def fuse(self, *loops: LoopRV, preserve_unit_iters: bool = True) -> LoopRV:
        """Fuse consecutive perfectly nested loops (outermost first) into one."""
        if len(loops) == 1 and isinstance(loops[0], list | tuple):
            loops = tuple(loops[0])
        fn = self._check_loops(*loops)
        new_func, var = _loops.fuse(self._func(fn), fn, [lp.var for lp in loops], preserve_unit_iters)
        self._commit(fn, new_func)
        return LoopRV(var, fn)

    @_primitive
    def merge(self, *loops: LoopRV) -> LoopRV:
        """Run the nests of `loops` (same depth and extents) as one nest; see merge.py."""
        from .merge import merge

        if len(loops) == 1 and isinstance(loops[0], list | tuple):
            loops = tuple(loops[0])
        fn = self._check_loops(*loops)
        new_func, var = merge(self._func(fn), fn, [lp.var for lp in loops])
        self._commit(fn, new_func)
        return LoopRV(var, fn)

    @_primitive
    def loop_partition(self, loop: LoopRV, factors, preserve_unit_iters: bool = True) -> list:
        """Cut `loop` into consecutive loops of extents `factors` (one may be None), each running
        a copy of the body with blocks renamed `<block>_<loop><k>`; see partition.py."""
        from .partition import loop_partition

        fn = self._check_loops(loop)
        new_func, new_vars = loop_partition(self._func(fn), fn, loop.var, factors, preserve_unit_iters)
        self._commit(fn, new_func)
        return [LoopRV(v, fn) for v in new_vars]

    @_primitive
    def reorder(self, *loops: LoopRV) -> None:
        """Reorder loops of one perfectly nested chain into the order given."""
        if len(loops) == 1 and isinstance(loops[0], list | tuple):
            loops = tuple(loops[0])
        fn = self._check_loops(*loops)
        self._commit(fn, _loops.reorder(self._func(fn), fn, [lp.var for lp in loops]))

    @_primitive
    def parallel(self, loop: LoopRV) -> None:
        """Run `loop` in parallel (it must bind only spatial block iters)."""
        fn = self._check_loops(loop)
        self._commit(fn, _for_kind.parallel(self._func(fn), fn, loop.var))

    @_primitive
    def vectorize(self, loop: LoopRV) -> None:
        """Vectorize `loop` (it must bind only spatial block iters)."""
        fn = self._check_loops(loop)
        self._commit(fn, _for_kind.vectorize(self._func(fn), fn, loop.var))

    @_primitive
    def unroll(self, loop: LoopRV) -> None:
        """Unroll `loop`."""
        fn = self._check_loops(loop)
        self._commit(fn, _for_kind.unroll(self._func(fn), fn, loop.var))

    @_primitive
    def bind(self, loop: LoopRV, thread_axis: str) -> None:
        """Bind `loop` to a thread axis: blockIdx.x/y/z, threadIdx.x/y/z or vthread."""
        fn = self._check_loops(loop)
        self._commit(fn, _for_kind.bind(self._func(fn), fn, loop.var, thread_axis))

    # -- annotations ---------------------------------------------------------------------
    def _rv_func(self, rv) -> str:
        if isinstance(rv, str):
            rv = self._block(rv)
        if isinstance(rv, LoopRV):
            self._loop_path(rv)
        elif isinstance(rv, BlockRV):
            self._block_path(rv)
        else:
            raise ScheduleError(f"expected a BlockRV or LoopRV, got {type(rv).__name__}")
        return rv.func_name

    def _target(self, rv):
        if isinstance(rv, str):
            rv = self._block(rv)
        return BlockRV(self._name(rv), rv.func_name) if isinstance(rv, BlockRV) else rv

    @_primitive
    def annotate(self, block_or_loop, ann_key: str, ann_val) -> None:
        """Attach annotation `ann_key` = `ann_val` to a block or loop."""
        fn = self._rv_func(block_or_loop)
        target = self._target(block_or_loop)
        self._commit(fn, _annotate.annotate(self._func(fn), fn, target, ann_key, ann_val))

    @_primitive
    def unannotate(self, block_or_loop, ann_key: str) -> None:
        """Remove annotation `ann_key` from a block or loop."""
        fn = self._rv_func(block_or_loop)
        target = self._target(block_or_loop)
        self._commit(fn, _annotate.unannotate(self._func(fn), fn, target, ann_key))


__all__ = ["Schedule", "ScheduleError", "BlockRV", "LoopRV"]
