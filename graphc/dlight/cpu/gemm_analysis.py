"""Recognise a GEMM-like block: `C[...] += A[...] * B[...]` with each iter var's role named.

A block is GEMM-like when it is a sum reduction whose update is
`C[c] = C[c] + cast?(X[x]) * cast?(Y[y])` (C a buffer of its own, initialised to zero), the
indices `c` are distinct plain iter vars, and every reduce iter indexes both factors. Its
iter vars then fall into four roles, read off which accesses use them:

- batch: spatial, used by C and by both factors (the heads of a batched matmul);
- I (the "M" side): spatial, used by C and by `A` only;
- J (the "N" side): spatial, the iter of C's last index, used by `B` only;
- R: the reduce iters, used by both factors.

`B`, the factor the J iter indexes, is the one the micro-kernel loads in vectors along C's
contiguous axis; `A` is the one it broadcasts. A block with any other shape (an iter used by
neither factor, a second J-side iter, the last index of C shared by both factors) is not
GEMM-like and `gemm_roles` returns None.

>>> from graphc import te, tir
>>> A = te.placeholder((4, 16, 8), name="A"); B = te.placeholder((4, 8, 32), name="B")
>>> k = te.reduce_axis((0, 8), "k")
>>> C = te.compute((4, 16, 32), lambda b, i, j: te.sum(A[b, i, k] * B[b, k, j], axis=k), name="C")
>>> sch = tir.Schedule(te.create_prim_func([A, B, C]))
>>> roles = gemm_roles(sch.get(sch.get_block("C")))
>>> [v.name for v in roles.batch], [v.name for v in roles.i_vars], roles.j_var.name, roles.a.buffer.name
(['v_b'], ['v_i'], 'v_j', 'A')
"""

from __future__ import annotations

from dataclasses import dataclass

from ...tir.analysis.var_use import uses_var
from ...tir.expr import Add, BufferLoad, Cast, FloatImm, FloorDiv, IntImm, Mul, PrimExpr, Var
from ...tir.stmt import Block, BufferStore, IterType


@dataclass(frozen=True)
class GemmRoles:
    """The roles of a GEMM-like block's iter vars and its two factor loads (see the module doc)."""

    out: BufferStore
    a: BufferLoad  # the broadcast operand
    b: BufferLoad  # the vector operand
    a_read: int  # index of a's buffer among the block's read regions
    b_read: int
    batch: tuple
    i_vars: tuple
    j_var: Var
    r_vars: tuple
    j_group: int | None = None  # A reads J only as J // j_group (a grouped convolution's group)

    def plain(self, load: BufferLoad) -> bool:
        """Whether every index of `load` is a distinct iter var (what pad_einsum needs)."""
        idx = load.indices
        return all(isinstance(e, Var) for e in idx) and len({id(e) for e in idx}) == len(idx)


def _strip_cast(e):
    while isinstance(e, Cast):
        e = e.value
    return e


def _is_zero(e) -> bool:
    return isinstance(e, FloatImm | IntImm) and e.value == 0


def gemm_roles(block: Block, reads=None, vector_operand: str = "output") -> GemmRoles | None:
    """The roles of `block`'s iters when it is GEMM-like, else None. `reads`: the block's read
    regions (default: its declared ones).

    `vector_operand="output"` (a matmul) takes J from C's last index; `"plain"` (an implicit
    GEMM: a convolution) takes B to be the factor indexed by plain iters only (the weight) and J
    its one output iter the other factor does not use (the output channel), wherever it sits
    in C.
    """
    found = _factors_of(block)
    if found is None:
        return None
    store, x, y, spatial, reduce = found
    out_idx = store.indices

    def used(load, v) -> bool:
        return any(uses_var(e, v) for e in load.indices)

    j_group = None
    if vector_operand == "plain":
        plain = [f for f in (x, y) if _plain(f)]
        if len(plain) != 1:
            return None
        b = plain[0]
        a = y if b is x else x
        own = [v for v in out_idx if used(b, v) and not used(a, v)]
        if not own:  # a grouped convolution: A reads the output channel's group only
            own = [v for v in out_idx if used(b, v) and _group_of(a, v) is not None]
            j_group = _group_of(a, own[0]) if len(own) == 1 else None
        if len(own) != 1:
            return None
        j_var = own[0]
    else:
        j_var = out_idx[-1]
        if used(x, j_var) and not used(y, j_var):
            a, b = y, x
        elif used(y, j_var) and not used(x, j_var):
            a, b = x, y
        else:
            return None
    batch, i_vars = [], []
    for v in spatial:
        if v is j_var:
            continue
        in_a, in_b = used(a, v), used(b, v)
        if in_a and in_b:
            batch.append(v)
        elif in_a:
            i_vars.append(v)
        else:  # a second J-side iter, or an iter no factor uses
            return None
    if not all(used(a, r) and used(b, r) for r in reduce):
        return None
    regions = reads if reads is not None else block.reads
    bufs = [r.buffer for r in regions]
    if a.buffer is b.buffer or a.buffer not in bufs or b.buffer not in bufs:
        return None
    return GemmRoles(store, a, b, bufs.index(a.buffer), bufs.index(b.buffer), tuple(batch), tuple(i_vars),
                     j_var, tuple(reduce), j_group)  # fmt: skip


def _group_of(load: BufferLoad, v) -> int | None:
    """`c` when every use of `v` in `load`'s indices is inside `v // c` (a constant c > 1)."""
    groups = set()

    def walk(e) -> bool:  # False: v used outside a floordiv by a constant
        if isinstance(e, FloorDiv) and e.a is v and isinstance(e.b, IntImm) and e.b.value > 1:
            groups.add(e.b.value)
            return True
        if e is v:
            return False
        return all(walk(c) for c in _children(e))

    if not all(walk(e) for e in load.indices) or len(groups) != 1:
        return None
    return groups.pop()


def _children(e) -> tuple:
    return tuple(getattr(e, f) for f in ("a", "b", "value") if isinstance(getattr(e, f, None), PrimExpr))


def _plain(load: BufferLoad) -> bool:
    idx = load.indices
    return all(isinstance(e, Var) for e in idx) and len(set(map(id, idx))) == len(idx)


def _factors_of(block: Block):
    """(store, factor, factor, spatial iters, reduce iters) of `C = C + x * y`, else None."""
    store = block.body
    if not isinstance(store, BufferStore) or block.init is None:
        return None
    init = block.init
    if not (isinstance(init, BufferStore) and init.buffer is store.buffer and _is_zero(init.value)):
        return None
    value = store.value
    if not isinstance(value, Add):
        return None
    acc, prod = value.a, value.b
    if not _is_load_of(acc, store):
        acc, prod = prod, acc
        if not _is_load_of(acc, store):
            return None
    prod = _strip_cast(prod)
    if not isinstance(prod, Mul):
        return None
    x, y = _strip_cast(prod.a), _strip_cast(prod.b)
    if not (isinstance(x, BufferLoad) and isinstance(y, BufferLoad)):
        return None
    if x.buffer is store.buffer or y.buffer is store.buffer:
        return None
    out_idx = store.indices
    if not out_idx or not all(isinstance(e, Var) for e in out_idx):
        return None
    if len(set(map(id, out_idx))) != len(out_idx):
        return None
    spatial = [iv.var for iv in block.iter_vars if iv.iter_type == IterType.DATA_PAR]
    reduce = [iv.var for iv in block.iter_vars if iv.iter_type == IterType.COMM_REDUCE]
    if len(spatial) + len(reduce) != len(block.iter_vars) or not reduce:
        return None
    if {id(v) for v in spatial} != {id(e) for e in out_idx}:
        return None
    return store, x, y, spatial, reduce


def _is_load_of(e, store: BufferStore) -> bool:
    return (
        isinstance(e, BufferLoad)
        and e.buffer is store.buffer
        and len(e.indices) == len(store.indices)
        and all(a is b for a, b in zip(e.indices, store.indices))
    )


__all__ = ["GemmRoles", "gemm_roles"]
