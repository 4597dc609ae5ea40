"""tensorize: replace a block's computation by the implementation of a registered tensor intrinsic.

A `TensorIntrin` is a pair of PrimFuncs (TVM's design): `desc` says what the intrinsic computes
(a loop nest around one block, on buffers of the intrinsic's shape) and `impl` how (any body on
buffers of the same shapes and dtypes, in the same order: an unrolled body, an extern call, a
hardware instruction). `TensorIntrin.register(name, desc, impl)` files it under `name`.

`tensorize(block, name)` takes a block whose body is a loop nest around one block (what
`blockize` makes; `Schedule.tensorize` on a loop blockizes it first) and matches it with the
description structurally: the same number of loops with the same constant extents, the same
iter vars (kinds, extents) bound the same way, and the same computation once the description's
loop and iter vars are mapped to the block's and each of its buffers to one of the block's:
every access of the block's buffer sits at a fixed offset (made of the outer block's iter vars
only) from the description's access. The body of the block is then replaced by `impl`'s, with
each buffer access moved by its offset. A mismatch raises ScheduleError naming the block and
what differs. A reduction block's init stays where blockize put it (in the outer block).

>>> from graphc import te, tir
>>> def matmul(n):
...     A = te.placeholder((n, n), name="A"); B = te.placeholder((n, n), name="B")
...     k = te.reduce_axis((0, n), "k")
...     C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
...     return te.create_prim_func([A, B, C])
>>> _ = TensorIntrin.register("doc_mma_4x4x4", matmul(4), matmul(4), override=True)
>>> sch = tir.Schedule(matmul(8))
>>> i, j, k = sch.get_loops(sch.get_block("C"))
>>> io, ii = sch.split(i, [None, 4]); jo, ji = sch.split(j, [None, 4]); ko, ki = sch.split(k, [None, 4])
>>> sch.reorder(io, jo, ko, ii, ji, ki)
>>> sch.tensorize(ii, "doc_mma_4x4x4").name
'C_o'
"""

from __future__ import annotations

import dataclasses

from ...errors import ScheduleError
from ..analysis.var_use import uses_any_var
from ..arith import Analyzer
from ..buffer import Buffer
from ..expr import BufferLoad, IntImm, PrimExpr, Range, Var, const
from ..function import PrimFunc
from ..functor import BufferAccessMutator, StmtMutator, substitute
from ..stmt import Block, BlockRealize, BufferStore, For
from .state import find_block_path, replace_stmts


class TensorIntrin:
    """A tensor intrinsic: what it computes (`desc`) and how (`impl`), both PrimFuncs."""

    _registry: dict = {}

    def __init__(self, desc: PrimFunc, impl: PrimFunc):
        for what, f in (("desc", desc), ("impl", impl)):
            if not isinstance(f, PrimFunc):
                raise ScheduleError(f"a tensor intrinsic's {what} must be a PrimFunc, got {type(f).__name__}")
        dbufs, ibufs = _buffers(desc), _buffers(impl)
        if len(dbufs) != len(ibufs) or any(
            d.dtype != i.dtype or len(d.shape) != len(i.shape) for d, i in zip(dbufs, ibufs)
        ):
            raise ScheduleError(
                "a tensor intrinsic's desc and impl must take buffers of the same dtypes and ranks, in "
                f"the same order; got {[(b.name, b.dtype) for b in dbufs]} and "
                f"{[(b.name, b.dtype) for b in ibufs]}"
            )
        _computation(desc, "the intrinsic's desc")  # must be loops around one block
        self.desc, self.impl = desc, impl

    @staticmethod
    def register(name: str, desc: PrimFunc, impl: PrimFunc, override: bool = False) -> TensorIntrin:
        """Register the intrinsic `name`; a second registration of a name raises unless `override`."""
        if name in TensorIntrin._registry and not override:
            raise ScheduleError(f"a tensor intrinsic named {name!r} is already registered "
                                "(pass override=True to replace it)")
        intrin = TensorIntrin(desc, impl)
        TensorIntrin._registry[name] = intrin
        return intrin

    @staticmethod
    def get(name: str, allow_missing: bool = False) -> TensorIntrin | None:
        """The intrinsic registered as `name` (None when missing and `allow_missing`)."""
        intrin = TensorIntrin._registry.get(name)
        if intrin is None and name.startswith("wmma_"):  # graphc's own, registered on first use
            from .. import tensor_intrin  # noqa: F401

            intrin = TensorIntrin._registry.get(name)
        if intrin is None and not allow_missing:
            known = ", ".join(sorted(TensorIntrin._registry)) or "none"
            raise ScheduleError(f"no tensor intrinsic named {name!r} is registered (known: {known})")
        return intrin


def _buffers(func: PrimFunc) -> list:
    return [func.buffer_map[p] for p in func.params if p in func.buffer_map]


def _strip_root(stmt):
    while isinstance(stmt, BlockRealize) and stmt.block.name_hint == "root" and not stmt.block.iter_vars:
        stmt = stmt.block.body
    return stmt


def _computation(func: PrimFunc, what: str):
    """(loops, block realize) of `func`'s body: a loop nest around one block."""
    return _loop_nest(_strip_root(func.body), what)


def _loop_nest(stmt, what: str):
    loops = []
    while isinstance(stmt, For):
        loops.append(stmt)
        stmt = stmt.body
    if not isinstance(stmt, BlockRealize):
        raise ScheduleError(f"{what} must be a loop nest around one block, found {type(stmt).__name__}")
    return loops, stmt


class _Mismatch(Exception):
    pass


class _Matcher:
    """Structural comparison of the description's computation with the block's."""

    def __init__(self, inner_vars: set):
        self.vmap: dict = {}  # description Var -> block Var
        self.bufs: dict = {}  # description Buffer -> (block Buffer, [(intrinsic's axis?, offset or index)])
        self.inner = inner_vars
        self.analyzer = Analyzer()

    def access(self, dbuf: Buffer, tbuf: Buffer, dind: tuple, tind: tuple) -> None:
        if dbuf.dtype != tbuf.dtype or len(dind) > len(tind):
            raise _Mismatch(f"buffer {tbuf.name} ({tbuf.dtype}, rank {len(tind)}) stands where the "
                            f"intrinsic has {dbuf.name} ({dbuf.dtype}, rank {len(dind)})")
        # the block's buffer may have more axes than the intrinsic's (a batch, an attention head
        # between the rows and the columns): those whose index is fixed inside the block are not
        # the intrinsic's; the others, in order, are its axes
        varying = [n for n, t in enumerate(tind) if uses_any_var(t, self.inner)]
        if len(tind) == len(dind):
            varying = list(range(len(tind)))
        elif len(varying) > len(dind):
            raise _Mismatch(f"{tbuf.name} varies along {len(varying)} axes inside the block, the "
                            f"intrinsic's {dbuf.name} has {len(dind)}")
        else:  # leading fixed axes first, then the intrinsic's (a fixed one among them: a unit tile)
            extra = len(tind) - len(dind)
            fixed = [n for n in range(len(tind)) if n not in varying][:extra]
            varying = [n for n in range(len(tind)) if n not in fixed]
        offsets, it = [], iter(dind)
        for n, t in enumerate(tind):
            if n not in varying:
                offsets.append((False, t))
                continue
            d = next(it)
            off = self.analyzer.simplify(t - substitute(d, self.vmap))
            if uses_any_var(off, self.inner):
                raise _Mismatch(f"{tbuf.name} is indexed {t} where the intrinsic indexes {dbuf.name} "
                                f"by {d}: not a fixed offset from it")
            offsets.append((True, off))
        seen = self.bufs.get(dbuf)
        if seen is None:
            if any(tb is tbuf for tb, _ in self.bufs.values()):
                raise _Mismatch(f"buffer {tbuf.name} stands for two of the intrinsic's buffers")
            self.bufs[dbuf] = (tbuf, offsets)
            return
        if seen[0] is not tbuf:
            raise _Mismatch(f"the intrinsic's {dbuf.name} stands for both {seen[0].name} and {tbuf.name}")
        same = (x[0] == y[0] and self.analyzer.can_prove_equal(x[1], y[1]) for x, y in zip(seen[1], offsets))
        if not all(same):
            raise _Mismatch(f"{tbuf.name} is read at two different offsets from the intrinsic's {dbuf.name}")

    def eq(self, d, t) -> None:
        if isinstance(d, Var):
            if self.vmap.get(d, d) is not t:
                raise _Mismatch(f"{t} stands where the intrinsic has {d}")
            return
        if type(d) is not type(t):
            raise _Mismatch(f"{_show(t)} stands where the intrinsic has {_show(d)}")
        if isinstance(d, BufferLoad | BufferStore):
            self.access(d.buffer, t.buffer, d.indices, t.indices)
            if isinstance(d, BufferStore):
                self.eq(d.value, t.value)
            if (d.predicate is None) != (t.predicate is None):
                raise _Mismatch(f"{_show(t)} and the intrinsic's {_show(d)} differ in their predicate")
            return
        if not dataclasses.is_dataclass(d):
            if isinstance(d, tuple | list):
                if len(d) != len(t):
                    raise _Mismatch(f"{len(t)} items stand where the intrinsic has {len(d)}")
                for a, b in zip(d, t):
                    self.eq(a, b)
                return
            if d != t:
                raise _Mismatch(f"{t!r} stands where the intrinsic has {d!r}")
            return
        for f in dataclasses.fields(d):
            a, b = getattr(d, f.name), getattr(t, f.name)
            if isinstance(a, PrimExpr | tuple | list) or dataclasses.is_dataclass(a):
                try:
                    self.eq(a, b)
                except _Mismatch as err:
                    if isinstance(d, PrimExpr) and not str(err).startswith("in "):
                        raise _Mismatch(f"in {_show(t)} (the intrinsic: {_show(d)}): {err}") from None
                    raise
            elif a != b:
                raise _Mismatch(f"{_show(t)} differs from the intrinsic's {_show(d)} in its {f.name} "
                                f"({b!r} against {a!r})")


def _show(node) -> str:
    try:
        return str(node)
    except Exception:  # noqa: BLE001 - printing is only for the message
        return type(node).__name__


def _match(intrin: TensorIntrin, block: Block, what: str) -> dict:
    """{description buffer: (block buffer, offsets)} when `block`'s body computes what the
    intrinsic describes; else ScheduleError."""
    dloops, drealize = _computation(intrin.desc, "the intrinsic's desc")
    tloops, trealize = _loop_nest(block.body, f"{what}: the block's body")
    if len(dloops) != len(tloops):
        raise ScheduleError(f"cannot {what}: the block has {len(tloops)} loops inside it, the intrinsic "
                            f"{len(dloops)}")
    inner = {lp.loop_var for lp in tloops} | {iv.var for iv in trealize.block.iter_vars}
    m = _Matcher(inner)
    try:
        for n, (d, t) in enumerate(zip(dloops, tloops)):
            if not (isinstance(d.extent, IntImm) and isinstance(t.extent, IntImm)
                    and d.extent.value == t.extent.value and _zero(d.min) and _zero(t.min)):
                raise _Mismatch(f"loop {n} ({t.loop_var.name}) runs over [{t.min}, {t.min} + {t.extent}), "
                                f"the intrinsic's over [{d.min}, {d.min} + {d.extent})")
            m.vmap[d.loop_var] = t.loop_var
        dblk, tblk = drealize.block, trealize.block
        if len(dblk.iter_vars) != len(tblk.iter_vars):
            raise _Mismatch(f"block {tblk.name_hint!r} has {len(tblk.iter_vars)} iter vars, the "
                            f"intrinsic's {len(dblk.iter_vars)}")
        pairs = zip(dblk.iter_vars, tblk.iter_vars, drealize.iter_values, trealize.iter_values)
        for div, tiv, dv, tv in pairs:
            same_extent = m.analyzer.can_prove_equal(div.dom.extent, tiv.dom.extent)
            if div.iter_type != tiv.iter_type or not same_extent:
                raise _Mismatch(f"iter var {tiv.var.name} ({tiv.iter_type.name}, extent {tiv.dom.extent}) "
                                f"stands where the intrinsic has {div.var.name} ({div.iter_type.name}, "
                                f"extent {div.dom.extent})")
            if not m.analyzer.can_prove_equal(substitute(dv, m.vmap), tv):
                raise _Mismatch(f"iter var {tiv.var.name} is bound to {tv}, the intrinsic's to {dv}")
            m.vmap[div.var] = tiv.var
        if not (_is_true(drealize.predicate) and _is_true(trealize.predicate)):
            raise _Mismatch("the block has a predicate (a non-dividing split): pad the loops first")
        m.eq(dblk.body, tblk.body)
    except _Mismatch as err:
        raise ScheduleError(f"cannot {what}: {err}") from None
    return m.bufs


def _zero(x) -> bool:
    return isinstance(x, IntImm) and x.value == 0


def _is_true(x) -> bool:
    return isinstance(x, IntImm) and x.value == 1


class _Instantiate(BufferAccessMutator):
    """The impl's body on the block's buffers: accesses moved by the matched offsets, loop vars fresh."""

    def __init__(self, bmap: dict):
        super().__init__()
        self.bmap = bmap

    def rewrite_access(self, buffer, indices):
        hit = self.bmap.get(buffer)
        if hit is None:
            return None
        tbuf, offsets = hit
        return tbuf, _moved(offsets, indices)

    def visit_buffer_region(self, region):
        region = super().visit_buffer_region(region)
        hit = self.bmap.get(region.buffer)
        if hit is None:
            return region
        tbuf, offsets = hit
        mins = _moved(offsets, tuple(r.min for r in region.region))
        inner = iter(region.region)
        ranges = tuple(next(inner).replace(min=x) if mapped else Range(x, const(1, x.dtype))
                       for (mapped, _), x in zip(offsets, mins))
        return region.replace(buffer=tbuf, region=ranges)


def _moved(offsets: list, indices: tuple) -> tuple:
    """`indices` of the impl's buffer as indices of the block's: its fixed axes as they are, the
    intrinsic's axes moved by their offsets."""
    it = iter(indices)
    out = []
    for mapped, off in offsets:
        if not mapped:
            out.append(off)
            continue
        i = next(it)
        out.append(i if _zero(off) else off + i)
    return tuple(out)


class _FreshLoops(StmtMutator):
    def visit_For(self, op):
        op = super().visit_For(op)
        new = Var(op.loop_var.name, op.loop_var.dtype)
        return op.replace(loop_var=new, body=substitute(op.body, {op.loop_var: new}))


def tensorize(func: PrimFunc, func_name: str, block_name: str, intrin_name: str) -> PrimFunc:
    """`func` with block `block_name`'s body replaced by intrinsic `intrin_name`'s implementation."""
    what = f"tensorize block {block_name!r} with {intrin_name!r}"
    intrin = TensorIntrin.get(intrin_name)
    path = find_block_path(func.body, block_name)
    if path is None:
        raise ScheduleError(f"cannot {what}: function {func_name!r} has no such block")
    realize = path[-1]
    block = realize.block
    matched = _match(intrin, block, what)
    bmap = {}
    for dbuf, ibuf in zip(_buffers(intrin.desc), _buffers(intrin.impl)):
        if dbuf not in matched:
            raise ScheduleError(f"cannot {what}: the block does not use the intrinsic's buffer {dbuf.name}")
        bmap[ibuf] = matched[dbuf]
    body = _FreshLoops().visit_stmt(_Instantiate(bmap).visit_stmt(_strip_root(intrin.impl.body)))
    new_block = block.replace(body=body)
    return func.with_body(replace_stmts(func.body, {realize: realize.replace(block=new_block)}))


__all__ = ["TensorIntrin", "tensorize"]
