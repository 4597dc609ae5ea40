"""The Schedule methods that restructure blocks and buffers (a mixin of `Schedule`):
blockize, tensorize, transform_layout, pad_einsum and reindex.

>>> import graphc.tir as tir
>>> all(hasattr(tir.Schedule, p) for p in ("blockize", "transform_layout", "pad_einsum", "reindex"))
True
"""

from __future__ import annotations

from ...errors import ScheduleError
from .trace import BlockRV, LoopRV, traced


class LayoutPrimitives:
    """blockize / tensorize / transform_layout / pad_einsum / reindex; mixed into `Schedule`."""

    @traced
    def blockize(self, loop_or_loops, preserve_unit_iters: bool = True) -> BlockRV:
        """Wrap the loops from `loop` down, and the single block under them, in a new block
        `<name>_o` whose iter vars are the outer parts of the block's bindings (see blockize.py).
        Returns the new outer block; the inner block keeps its name and handles."""
        from .blockize import blockize

        loop = loop_or_loops
        if isinstance(loop, list | tuple):
            if len(loop) != 1 or not isinstance(loop[0], LoopRV):
                raise ScheduleError(
                    "blockize takes one loop (a list of blocks is not supported: blockize their common "
                    "loop instead)"
                )
            loop = loop[0]
        fn = self._check_loops(loop)
        new_func, name = blockize(self._func(fn), fn, loop.var, preserve_unit_iters)
        self._commit(fn, new_func)
        return BlockRV(name, fn)

    @traced
    def tensorize(self, block_or_loop, tensor_intrin: str, preserve_unit_iters: bool = True) -> BlockRV:
        """Replace the computation of a block (a loop nest around one block, as `blockize`
        makes) by the registered `TensorIntrin` `tensor_intrin` (tensorize.py); a loop is
        blockized first. Returns the tensorized block."""
        from .tensorize import tensorize

        if isinstance(block_or_loop, LoopRV):
            block_or_loop = self.blockize(block_or_loop, preserve_unit_iters)
        block = self._block(block_or_loop)
        self._block_path(block)
        new_func = tensorize(self._func(block.func_name), block.func_name, self._name(block), tensor_intrin)
        self._commit(block.func_name, new_func)
        return block

    @traced
    def transform_layout(
        self, block: BlockRV, buffer, index_map, pad_value=None, assume_injective_transform: bool = False
    ) -> None:
        """Store `buffer` (("read"|"write", i) of `block`, a name, or a Buffer) at the indices
        `index_map(*old_indices)` gives; every access in the function is rewritten. The map must
        be bijective, or injective with `pad_value` for the padding (see layout.py), or injective
        with `assume_injective_transform=True`: the padding is left unwritten, on the caller's
        promise that nothing reads it. `pad_value` must match the buffer's dtype (a Python int
        for an integer buffer, a float for a float one). For a parameter buffer the function's
        signature changes to the new shape."""
        from .layout import resolve_buffer, transform_layout
        from .trace import IndexMap

        given = index_map
        if not isinstance(index_map, IndexMap) and callable(index_map) and self._depth == 1:
            # recorded as an IndexMap over the buffer's indices, so the trace prints and serialises
            blk = self._block(block)
            buf = resolve_buffer(self._func(blk.func_name), self._name(blk), buffer, "transform_layout")
            try:
                index_map = IndexMap.from_func(index_map, len(buf.shape), [d.dtype for d in buf.shape])
            except TypeError as err:
                raise ScheduleError(
                    f"cannot transform_layout: the index map must take {len(buf.shape)} indices ({err})"
                ) from None
            self._record_as = (given, index_map)
        self._apply(block, transform_layout, buffer, index_map, pad_value, assume_injective_transform)

    @traced
    def pad_einsum(self, block: BlockRV, padding) -> None:
        """Pad the iteration space of einsum `block` to multiples of `padding` (one per iter
        var): inputs are copied into zero-padded `<name>_pad` buffers, the output is computed in
        a padded buffer and copied back (see pad.py)."""
        from .pad import pad_einsum

        self._apply(block, pad_einsum, list(padding))

    @traced
    def reindex(self, block: BlockRV | str, buffer) -> BlockRV:
        """Stage the ("read" | "write", i) buffer of `block` (or the buffer of that name among the
        block's reads and writes) through `<buffer>_reindex`, indexed by the block iter vars its
        access uses (see reindex.py). Returns the copying block."""
        from .reindex import reindex

        block = self._block(block)
        return BlockRV(self._apply(block, reindex, buffer), block.func_name)
