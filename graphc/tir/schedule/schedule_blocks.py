"""The Schedule methods that move, inline, cache and decompose blocks (a mixin of `Schedule`).

Each method resolves its handles, calls the functional primitive (which raises ScheduleError
before building anything when the transformation is illegal) and commits the new PrimFunc.

>>> import graphc.tir as tir
>>> hasattr(tir.Schedule, "compute_at") and hasattr(tir.Schedule, "cache_read")
True
"""

from __future__ import annotations

from ...errors import ScheduleError
from .trace import BlockRV, LoopRV, traced


class BlockPrimitives:
    """compute_at / reverse_compute_at / compute_inline / reverse_compute_inline, caching,
    decompose_reduction, set_scope; mixed into `Schedule`."""

    def _apply(self, block: BlockRV, fn, *args):
        """Run functional primitive `fn(func, func_name, block_name, *args)` and commit its func."""
        block = self._block(block)
        self._block_path(block)
        name = self._name(block)
        result = fn(self._func(block.func_name), block.func_name, name, *args)
        new_func, extra = result if isinstance(result, tuple) else (result, None)
        self._commit(block.func_name, new_func)
        return extra

    @traced
    def compute_inline(self, block: BlockRV) -> None:
        """Inline an elementwise producer block into its consumers and remove it."""
        from .compute_inline import compute_inline

        self._apply(block, compute_inline)

    @traced
    def reverse_compute_inline(self, block: BlockRV) -> None:
        """Inline an elementwise consumer block into its single producer and remove it."""
        from .compute_inline import reverse_compute_inline

        self._apply(block, reverse_compute_inline)

    @traced
    def compute_at(
        self, block: BlockRV, loop: LoopRV, preserve_unit_loops: bool = False, index: int = -1
    ) -> None:
        """Move producer `block` under `loop` of its consumers, computing only what they need."""
        from .compute_at import compute_at

        self._check_loops(loop)
        self._apply(block, compute_at, loop.var, preserve_unit_loops, False, index)

    @traced
    def reverse_compute_at(
        self, block: BlockRV, loop: LoopRV, preserve_unit_loops: bool = False, index: int = -1
    ) -> None:
        """Move consumer `block` under `loop` of its producers, consuming what they produced."""
        from .compute_at import compute_at

        self._check_loops(loop)
        self._apply(block, compute_at, loop.var, preserve_unit_loops, True, index)

    @traced
    def decompose_reduction(self, block: BlockRV, loop: LoopRV) -> BlockRV:
        """Split a reduction block's init into its own block `<name>_init` placed before `loop`.

        The reduction block is renamed `<name>_update`; existing handles follow it.
        """
        from .reduction import decompose_reduction

        self._check_loops(loop)
        block = self._block(block)
        old = self._name(block)
        init_name, update_name = self._apply(block, decompose_reduction, loop.var)
        self._aliases[(block.func_name, old)] = update_name
        return BlockRV(init_name, block.func_name)

    @traced
    def cache_read(
        self, block: BlockRV, read_buffer_index: int, storage_scope: str, consumer_blocks=None
    ) -> BlockRV:
        """Copy the `read_buffer_index`-th buffer `block` reads into a new `storage_scope` buffer
        before its consumers, and make them read the copy. Returns the copying block."""
        from .cache import cache_read

        block = self._block(block)
        names = None if consumer_blocks is None else [self._name(b) for b in consumer_blocks]
        name = self._apply(block, cache_read, read_buffer_index, storage_scope, names)
        return BlockRV(name, block.func_name)

    @traced
    def cache_write(
        self, block: BlockRV, write_buffer_index: int, storage_scope: str, consumer_blocks=None
    ) -> BlockRV:
        """Make `block` write a new `storage_scope` buffer, copied back to the original right
        after it. Returns the copying block."""
        from .cache import cache_write

        block = self._block(block)
        names = None if consumer_blocks is None else [self._name(b) for b in consumer_blocks]
        name = self._apply(block, cache_write, write_buffer_index, storage_scope, names)
        return BlockRV(name, block.func_name)

    @traced
    def reindex_cache_read(
        self, block: BlockRV, read_buffer_index: int, storage_scope: str, index_map
    ) -> BlockRV:
        """Copy the single point `A[f(v)]` that `block` reads into `A_<scope>[index_map(v)]` over the
        block's own loops, and make the block read that (see reindex_cache.py). Returns the copy block."""
        from .reindex_cache import reindex_cache

        block = self._block(block)
        name = self._apply(block, reindex_cache, read_buffer_index, storage_scope, index_map, False)
        return BlockRV(name, block.func_name)

    def cache_index(self, block: BlockRV, storage_scope: str, cse_thresh: int = 0):
        """TVM's `cache_index` (precompute a block's index expressions into buffers) is not in
        graphc: it raises ScheduleError naming the block, and the schedule is unchanged. The index
        arithmetic it would hoist is computed inline; `compute_at` / `cache_read` cover the data
        reuse (docs/porting.md)."""
        name = self._name(self._block(block))
        raise ScheduleError(
            f"cache_index of block {name!r} into scope {storage_scope!r} is not supported by graphc "
            f"(TVM's index-precomputation primitive has no graphc implementation)"
        )

    @traced
    def reindex_cache_write(
        self, block: BlockRV, write_buffer_index: int, storage_scope: str, index_map
    ) -> BlockRV:
        """Make `block` write `C_<scope>[index_map(v)]` instead of its single point `C[f(v)]`, copied
        back by a block after its loops (see reindex_cache.py). Returns the copy block."""
        from .reindex_cache import reindex_cache

        block = self._block(block)
        name = self._apply(block, reindex_cache, write_buffer_index, storage_scope, index_map, True)
        return BlockRV(name, block.func_name)

    @traced
    def set_scope(self, block: BlockRV, buffer_index, storage_scope: str) -> None:
        """Set the storage scope of the `buffer_index`-th buffer `block` writes (or the one of that
        name), an intermediate; match_buffer views of it take the scope too."""
        from .cache import set_scope

        self._apply(block, set_scope, buffer_index, storage_scope)

    @traced
    def get_output_blocks(self, scope_block: BlockRV) -> list:
        """The blocks under `scope_block` that write a buffer of the function's parameters."""
        from .blocks import child_realizes, write_buffers

        scope_block = self._block(scope_block)
        func = self._func(scope_block.func_name)
        params = set(func.buffer_map.values())
        scope = self._block_path(scope_block)[-1].block
        return [
            BlockRV(r.block.name_hint, scope_block.func_name)
            for r in child_realizes(scope)
            if params.intersection(write_buffers(r.block))
        ]

    @traced
    def add_unit_loop(self, block_or_loop) -> LoopRV:
        """Wrap a block or loop in a new loop of extent 1; returns it."""
        from ..expr import Var, const
        from ..stmt import For, ForKind
        from .state import replace_stmts

        if isinstance(block_or_loop, str):
            block_or_loop = self._block(block_or_loop)
        if isinstance(block_or_loop, BlockRV):
            stmt = self._block_path(block_or_loop)[-1]
        elif isinstance(block_or_loop, LoopRV):
            stmt = self._loop_path(block_or_loop)[-1]
        else:
            raise ScheduleError(f"expected a BlockRV or LoopRV, got {type(block_or_loop).__name__}")
        fn = block_or_loop.func_name
        func = self._func(fn)
        if stmt is func.body:
            raise ScheduleError("cannot add a loop around the root block")
        var = Var("u", "int32")
        loop = For(var, const(0), const(1), ForKind.SERIAL, stmt)
        self._commit(fn, func.with_body(replace_stmts(func.body, {stmt: loop})))
        return LoopRV(var, fn)

    @traced
    def rfactor(self, loop: LoopRV, factor_axis: int) -> BlockRV:
        """Factor the reduction of the block under `loop` over `loop` into a buffer `<B>_rf`.

        Block `<name>_rf` computes partial results with `loop` as a spatial iter (inserted at
        `factor_axis` of the new buffer); the original block then reduces them. Returns the rf block.
        """
        from .reduction import rfactor
        from .state import scope_realizes

        path = self._loop_path(loop)
        realizes = scope_realizes(path[-1])
        if len(realizes) != 1 or realizes[0].block.init is None:
            reductions = sum(1 for r in realizes if r.block.init is not None)
            raise ScheduleError(
                f"cannot rfactor loop {loop.var.name}: it must contain exactly one reduction block and no "
                f"other block, found {len(realizes)} block(s), {reductions} of them reduction blocks"
            )
        block = BlockRV(realizes[0].block.name_hint, loop.func_name)
        return BlockRV(self._apply(block, rfactor, loop.var, factor_axis), loop.func_name)

    @traced
    def storage_align(self, block: BlockRV, buffer_index: int, axis: int, factor: int, offset: int) -> None:
        """Ask for the strides of axis `axis` of the `buffer_index`-th buffer `block` writes to be
        `factor * k + offset` (recorded as the block annotation "buffer_dim_align", as TVM does)."""
        from .annotate import annotate
        from .blocks import access
        from .state import walk

        block = self._block(block)
        blk = self._block_path(block)[-1].block
        what = f"storage_align buffer {buffer_index} of block {blk.name_hint!r}"
        writes = access(blk)[1]
        if not isinstance(buffer_index, int) or not 0 <= buffer_index < len(writes):
            raise ScheduleError(
                f"cannot {what}: the block writes {len(writes)} buffer(s); index {buffer_index} is out of "
                f"range"
            )
        buf = writes[buffer_index].buffer
        ndim = len(buf.shape)
        if not -ndim <= axis < ndim:
            raise ScheduleError(
                f"cannot {what}: axis {axis} is out of range [{-ndim}, {ndim}) for {buf.name}"
            )
        axis = axis + ndim if axis < 0 else axis
        if factor <= 0:
            raise ScheduleError(f"cannot {what}: the factor must be positive, got {factor}")
        from ..stmt import Block

        func = self._func(block.func_name)
        if not any(isinstance(s, Block) and any(b is buf for b in s.alloc_buffers) for s in walk(func.body)):
            raise ScheduleError(
                f"cannot {what}: {buf.name} is not allocated by a block (it is a function parameter or a "
                f"match_buffer view), so its strides are not the schedule's to choose"
            )
        existing = blk.annotations.get("buffer_dim_align", [])
        tuples = isinstance(existing, list | tuple) and all(
            isinstance(x, list | tuple) and len(x) == 4 and all(isinstance(v, int) for v in x)
            for x in existing
        )
        if not tuples:
            raise ScheduleError(
                f"cannot {what}: the block's buffer_dim_align annotation {existing!r} is not a list of "
                f"(buffer_index, axis, factor, offset) tuples"
            )
        aligns = [list(x) for x in existing]
        aligns = [x for x in aligns if not (x[0] == buffer_index and x[1] == axis)]
        aligns.append([buffer_index, axis, factor, offset])
        rv = BlockRV(blk.name_hint, block.func_name)
        self._commit(block.func_name, annotate(self._func(block.func_name), block.func_name, rv,
                                               "buffer_dim_align", aligns))  # fmt: skip
