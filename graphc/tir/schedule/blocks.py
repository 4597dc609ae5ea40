"""Block relations within a scope: child blocks, producers and consumers, buffer accesses.

Two blocks of one scope (the same enclosing block) are producer and consumer when the
first writes a buffer the second reads, by their `reads`/`writes` regions (computed with
`get_block_access_region` when a block declares none).
"""

from __future__ import annotations

from ..analysis.block_access import get_block_access_region
from ..stmt import Block, BlockRealize
from .state import enclosing_block, scope_realizes


def child_realizes(stmt) -> list:
    """The BlockRealizes directly in the scope of a Block or For."""
    return scope_realizes(stmt)


def access(block: Block) -> tuple[tuple, tuple]:
    """(reads, writes) of `block`: its declared regions, or detected ones when it declares none."""
    if block.reads or block.writes:
        return block.reads, block.writes
    return get_block_access_region(block)


def read_buffers(block: Block) -> list:
    return [r.buffer for r in access(block)[0]]


def write_buffers(block: Block) -> list:
    return [w.buffer for w in access(block)[1]]


def _siblings(path: list) -> list:
    scope = enclosing_block(path)
    if scope is None:
        return []
    return [r for r in scope_realizes(scope) if r is not path[-1]]


def producers(path: list) -> list[str]:
    """Names of the blocks of `path[-1]`'s scope that write what it reads, in program order."""
    block = path[-1].block
    reads = set(read_buffers(block))
    return [r.block.name_hint for r in _siblings(path) if reads.intersection(write_buffers(r.block))]


def consumers(path: list) -> list[str]:
    """Names of the blocks of `path[-1]`'s scope that read what it writes, in program order."""
    block = path[-1].block
    writes = set(write_buffers(block))
    return [r.block.name_hint for r in _siblings(path) if writes.intersection(read_buffers(r.block))]


def is_reduction(block: Block) -> bool:
    from ..stmt import IterType

    return block.init is not None or any(iv.iter_type != IterType.DATA_PAR for iv in block.iter_vars)


__all__ = ["child_realizes", "access", "producers", "consumers", "BlockRealize", "is_reduction"]
