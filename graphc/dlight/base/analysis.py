"""Block infos: a PrimFunc's blocks seen as loop nests whose loops are spatial, reduce or other.

Schedule rules do not look at raw TensorIR; they ask `normalize_prim_func(sch)` for one
`BlockInfo` per block of the root scope, in program order. Each loop around a block gets a
kind: "S" when it drives only spatial (data-parallel) block iters, "R" when it drives a
reduce iter, "O" for anything else (scan/opaque iters). A block's `dom_kind()` is the
string of its loops' kinds, outermost first: a row sum is "SR", a matmul "SSR".

>>> from graphc import te, tir
>>> A = te.placeholder((8, 16), name="A"); k = te.reduce_axis((0, 16), "k")
>>> S = te.compute((8,), lambda i: te.sum(A[i, k], axis=k), name="S")
>>> sch = tir.Schedule(te.create_prim_func([A, S]))
>>> [(b.name, b.dom_kind(), b.is_reduction()) for b in normalize_prim_func(sch)]
[('S', 'SR', True)]
"""

from __future__ import annotations

from dataclasses import dataclass

from ...tir.analysis.block_access import to_affine
from ...tir.analysis.var_use import uses_var
from ...tir.expr import IntImm, PrimExpr, Var
from ...tir.function import PrimFunc
from ...tir.schedule import BlockRV, LoopRV, Schedule
from ...tir.schedule.state import find_block_path, loops_above
from ...tir.stmt import Block, BlockRealize, IterType


@dataclass(frozen=True)
class IterInfo:
    """One loop around a block: its kind ("S", "R" or "O"), loop Var, extent and handle."""

    kind: str
    var: Var
    dom: PrimExpr
    loop_rv: LoopRV

    @property
    def extent(self) -> int | None:
        """The extent as a Python int, or None when it is symbolic."""
        return self.dom.value if isinstance(self.dom, IntImm) else None


@dataclass(frozen=True)
class BlockInfo:
    """A block of the root scope with its loops classified (see the module docstring)."""

    name: str
    iters: tuple
    block_rv: BlockRV
    reduction_block: bool

    def dom_kind(self) -> str:
        return "".join(it.kind for it in self.iters)

    def dom(self) -> list:
        return [it.dom for it in self.iters]

    def is_injective(self) -> bool:
        """Every loop is spatial and the block has no init: one output element per instance."""
        return not self.reduction_block and all(it.kind == "S" for it in self.iters)

    def is_reduction(self) -> bool:
        """The block reduces: it has a reduce loop, and only spatial and reduce loops."""
        kinds = self.dom_kind()
        return self.reduction_block and "R" in kinds and "O" not in kinds

    def is_elementwise(self, sch: Schedule) -> bool:
        """Injective, and every buffer it reads is indexed exactly like the buffer it writes."""
        if not self.is_injective():
            return False
        block = sch.get(self.block_rv)
        reads, writes = block_regions(block)
        if len(writes) != 1:
            return False
        out = [r.min for r in writes[0].region]
        for region in reads:
            idx = [r.min for r in region.region]
            if len(idx) != len(out) or any(not _same(a, b) for a, b in zip(idx, out)):
                return False
        return True

    def total_work(self) -> int | None:
        """The product of the loop extents (None when one is symbolic)."""
        work = 1
        for it in self.iters:
            if it.extent is None:
                return None
            work *= it.extent
        return work

    def __repr__(self) -> str:
        return f"BlockInfo({self.name!r}, {self.dom_kind()!r}, extents={[str(d) for d in self.dom()]})"


def _same(a: PrimExpr, b: PrimExpr) -> bool:
    if a is b:
        return True
    fa, fb = to_affine(a), to_affine(b)
    return fa is not None and fa == fb


def block_regions(block: Block) -> tuple:
    """(reads, writes) of a block: the declared regions, or detected ones when it declares none."""
    from ...tir.schedule.blocks import access

    return access(block)


def block_realize(sch: Schedule, block_rv: BlockRV) -> BlockRealize:
    """The BlockRealize of a block: its iter bindings and predicate."""
    func = sch.mod[block_rv.func_name]
    return find_block_path(func.body, sch.get(block_rv).name_hint)[-1]


def loop_kind(realize: BlockRealize, var: Var) -> str:
    """The kind of loop `var` for the block `realize` runs: "S", "R" or "O"."""
    kinds = set()
    for iv, value in zip(realize.block.iter_vars, realize.iter_values):
        if uses_var(value, var):
            kinds.add(iv.iter_type)
    if not kinds or kinds == {IterType.DATA_PAR}:
        return "S"
    if kinds <= {IterType.DATA_PAR, IterType.COMM_REDUCE}:
        return "R"
    return "O"


def get_block_info(sch: Schedule, block_rv: BlockRV) -> BlockInfo:
    """The BlockInfo of one block."""
    func = sch.mod[block_rv.func_name]
    block = sch.get(block_rv)
    path = find_block_path(func.body, block.name_hint)
    realize = path[-1]
    loops = loops_above(path)
    fn = block_rv.func_name
    iters = tuple(
        IterInfo(loop_kind(realize, lp.loop_var), lp.loop_var, lp.extent, LoopRV(lp.loop_var, fn))
        for lp in loops
    )
    reduction = block.init is not None or any(iv.iter_type != IterType.DATA_PAR for iv in block.iter_vars)
    return BlockInfo(block.name_hint, iters, block_rv, reduction)


def normalize_prim_func(sch: Schedule) -> list[BlockInfo] | None:
    """One BlockInfo per block directly under the root block, in program order.

    Returns None when the function is not in block form (no root block, e.g. already
    lowered) or has blocks nested in other blocks below the root (rules built on block
    infos do not handle nested scopes).
    """
    body = sch.mod[sch.func_name].body
    if not isinstance(body, BlockRealize) or body.block.name_hint != "root":
        return None
    root = sch.get_block("root")
    infos = [get_block_info(sch, b) for b in sch.get_child_blocks(root)]
    total = _count_blocks(sch.mod[sch.func_name].body)
    if total != len(infos) + 1:
        return None
    return infos


def _count_blocks(stmt) -> int:
    from ...tir.schedule.state import walk

    return sum(1 for s in walk(stmt) if isinstance(s, Block))


def output_buffers(func: PrimFunc) -> set:
    """The buffers of a function's parameters (what the caller can observe)."""
    return set(func.buffer_map.values())


def is_output_block(sch: Schedule, block_rv: BlockRV) -> bool:
    """Whether a block writes one of the function's parameter buffers."""
    _, writes = block_regions(sch.get(block_rv))
    outs = output_buffers(sch.mod[block_rv.func_name])
    return any(w.buffer in outs for w in writes)


__all__ = [
    "BlockInfo",
    "IterInfo",
    "block_realize",
    "block_regions",
    "get_block_info",
    "is_output_block",
    "loop_kind",
    "normalize_prim_func",
    "uses_var",
]
