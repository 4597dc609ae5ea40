"""pad_einsum: pad an einsum block's iteration space to multiples of given factors.

`pad_einsum(block, padding)` (TVM's primitive, in its copy-in / copy-out form) takes a block
whose every buffer index is one of its iter vars, each iter var bound to its own loop of the
same extent (as `te.compute` and `T.grid` make them); an input indexed otherwise (a
convolution's window over its input) is allowed when no padded iter var indexes it, and is
read as it is. For iter var `v` of extent `E` and
padding `p`, the new extent is `ceil(E / p) * p`. Then:

- every buffer the block reads that is indexed by a padded iter var is copied, before the
  block's loop nest, into a padded buffer `<name>_pad` by a block `<name>_pad` that writes
  `T.if_then_else(in bounds, X[v...], 0)`: padding is zero;
- the buffer it writes becomes a padded `<name>_pad`, copied back to the original (over the
  original shape) by a block `<name>_pad` after the loop nest;
- the block and its loops run over the padded extents, without predicates, so the loops split
  evenly (a 1000 x 1000 x 1000 matmul padded by 32 runs over 1024^3 and tiles by 32).

Zero padding is only correct when the padded terms add nothing: a reduction block must be
`out = out + a * b * ...` (casts allowed) where every padded reduction iter var indexes one of
the factors; anything else (a max, a sum of plain loads) is refused. A spatial block may
compute anything: its padded positions are dropped by the copy-out. Paddings that change
nothing leave the function as it is.

>>> from graphc import tir
>>> from graphc.script import from_source
>>> f = from_source('''
... @T.prim_func
... def main(A: T.Buffer((10, 10), "float32"), B: T.Buffer((10, 10), "float32"),
...          C: T.Buffer((10, 10), "float32")):
...     for i, j, k in T.grid(10, 10, 10):
...         with T.block("C"):
...             vi, vj, vk = T.axis.remap("SSR", [i, j, k])
...             with T.init():
...                 C[vi, vj] = 0.0
...             C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
... ''')
>>> sch = tir.Schedule(f)
>>> sch.pad_einsum(sch.get_block("C"), [4, 4, 4])
>>> [sch.get(lp).extent.value for lp in sch.get_loops(sch.get_block("C"))]
[12, 12, 12]
>>> [b.name_hint for b in (sch.get(x) for x in sch.get_child_blocks(sch.get_block("root")))]
['A_pad', 'B_pad', 'C', 'C_pad']
"""

from __future__ import annotations

from ...errors import ScheduleError
from ..analysis.var_use import uses_var
from ..buffer import decl_buffer
from ..expr import BufferLoad, Cast, IntImm, Mul, Range, Var, const, floordiv, logical_and
from ..functor import StmtExprMutator, post_order_visit
from ..op import if_then_else
from ..stmt import Block, BlockRealize, BufferRegion, BufferStore, For, ForKind, IterType, IterVar, SeqStmt
from .blocks import access
from .bounds import shape_analyzer
from .state import enclosing_block, find_block_path, loops_above, replace_stmts


def _check_shape(func, name: str, padding, what: str):
    path = find_block_path(func.body, name)
    realize = path[-1]
    block = realize.block
    if len(padding) != len(block.iter_vars):
        raise ScheduleError(
            f"cannot {what}: padding has {len(padding)} entries, the block has "
            f"{len(block.iter_vars)} iter vars"
        )
    if any(not isinstance(p, int) or p <= 0 for p in padding):
        raise ScheduleError(f"cannot {what}: paddings must be positive integers, got {list(padding)}")
    if not (isinstance(realize.predicate, IntImm) and realize.predicate.value == 1):
        raise ScheduleError(f"cannot {what}: the block has a predicate; pad before splitting its loops")
    loops = loops_above(path)
    if not loops or not block.iter_vars:
        raise ScheduleError(f"cannot {what}: the block has no loops to pad")
    by_var = {lp.loop_var: lp for lp in loops}
    used = set()
    for iv, value in zip(block.iter_vars, realize.iter_values):
        lp = by_var.get(value) if isinstance(value, Var) else None
        if (
            lp is None
            or id(lp) in used
            or not _same(lp.extent, iv.dom.extent)
            or not _zero(lp.min)
            or (not _zero(iv.dom.min))
        ):
            raise ScheduleError(
                f"cannot {what}: iter var {iv.var.name} must be bound to its own loop of the same extent "
                f"(got {value}); apply pad_einsum before splitting or fusing its loops"
            )
        used.add(id(lp))
    if (
        len(loops) != len(block.iter_vars)
        or loops[-1].body is not realize
        or any(lp.body is not loops[k + 1] for k, lp in enumerate(loops[:-1]))
    ):
        raise ScheduleError(f"cannot {what}: the block must sit alone in a perfect nest of its own loops")
    return path, realize, loops


def _same(a, b) -> bool:
    return a is b or (isinstance(a, IntImm) and isinstance(b, IntImm) and a.value == b.value)


def _zero(e) -> bool:
    return isinstance(e, IntImm) and e.value == 0


def _index_vars(block: Block, what: str) -> tuple:
    """(buffer -> the iter var at each of its dimensions (every access must agree), buffer -> the
    index tuples of its accesses that are not plain iter vars). The second kind is allowed for a
    buffer no padded iter var indexes (`_check_other`): a convolution's window read of its input,
    when only the output channels are padded."""
    ivars = {iv.var for iv in block.iter_vars}
    found: dict = {}
    other: dict = {}

    def note(buffer, indices):
        if not all(isinstance(i, Var) and i in ivars for i in indices):
            other.setdefault(buffer, []).append(tuple(indices))
            return
        if found.setdefault(buffer, tuple(indices)) != tuple(indices):
            raise ScheduleError(f"cannot {what}: {buffer.name} is accessed at different indices")

    class _Visit(StmtExprMutator):
        def visit_BufferLoad(self, op):
            note(op.buffer, op.indices)
            return super().visit_BufferLoad(op)

        def visit_BufferStore(self, op):
            note(op.buffer, op.indices)
            return super().visit_BufferStore(op)

    _Visit().visit_stmt(block.body)
    if block.init is not None:
        _Visit().visit_stmt(block.init)
    for buffer in other:
        if buffer in found:
            raise ScheduleError(f"cannot {what}: {buffer.name} is accessed at different indices")
    return found, other


def _check_other(other: dict, padded: set, written: set, what: str) -> None:
    """Accesses by other than plain iter vars: only of inputs that no padded iter var indexes."""
    for buffer, accesses in other.items():
        for indices in accesses:
            if buffer in written or any(uses_var(i, v) for i in indices for v in padded):
                raise ScheduleError(
                    f"cannot {what}: access {buffer.name}[{', '.join(str(i) for i in indices)}] is not "
                    f"indexed by plain iter vars, so the block is not an einsum"
                )


def _factors(e) -> list:
    if isinstance(e, Mul):
        return _factors(e.a) + _factors(e.b)
    if isinstance(e, Cast):
        return _factors(e.value)
    return [e]


def _check_reduction(block: Block, padded: set, what: str) -> None:
    reduce_padded = [
        iv.var for iv in block.iter_vars if iv.iter_type != IterType.DATA_PAR and iv.var in padded
    ]
    if not reduce_padded:
        return
    store = block.body
    ok = isinstance(store, BufferStore) and type(store.value).__name__ == "Add"
    if ok:
        a, b = store.value.a, store.value.b
        if isinstance(b, BufferLoad) and b.buffer is store.buffer:
            a, b = b, a
        ok = isinstance(a, BufferLoad) and a.buffer is store.buffer
        factors = [f for f in _factors(b) if isinstance(f, BufferLoad)] if ok else []
        ok = ok and all(any(uses_var(f, v) for f in factors) for v in reduce_padded)
    if not ok:
        raise ScheduleError(
            f"cannot {what}: zero padding of reduction iters is only sound for `out = out + a * b * ...` "
            f"where each padded reduction iter indexes a factor"
        )


def _check_outputs(func, realize, written: set, index_vars: dict, padded: set, what: str) -> None:
    """A padded output is computed from scratch in `<name>_pad`: no other block may write it or read
    it before the block (blocks after it read the copy-out, so consumers are fine), and the block
    must not accumulate into what was there before (a reduction needs its init)."""
    from .blocks import read_buffers, write_buffers
    from .state import walk

    for buf in written:
        if not any(v in padded for v in index_vars.get(buf, ())):
            continue
        after = False
        for s in walk(func.body):
            if s is realize:
                after = True
            elif isinstance(s, BlockRealize) and s.block.name_hint != "root":
                if buf in write_buffers(s.block) or (not after and buf in read_buffers(s.block)):
                    raise ScheduleError(
                        f"cannot {what}: block {s.block.name_hint!r} also accesses its output {buf.name}; "
                        f"pad before decompose_reduction or caching"
                    )
        loads: list = []
        post_order_visit(realize.block.body, lambda e, b=buf, out=loads: _note_load(e, b, out))
        if realize.block.init is None and loads:
            raise ScheduleError(
                f"cannot {what}: the block updates {buf.name} without an init, so a padded copy would "
                f"start from undefined values"
            )


def _note_load(e, buf, out: list) -> None:
    if isinstance(e, BufferLoad) and e.buffer is buf:
        out.append(e)


def pad_einsum(func, func_name: str, name: str, padding):
    """Pad block `name`'s iteration space (see the module docstring); returns the new func."""
    what = f"pad_einsum block {name!r}"
    padding = list(padding)
    path, realize, loops = _check_shape(func, name, padding, what)
    block = realize.block
    index_vars, other = _index_vars(block, what)
    ana = shape_analyzer(func)
    new_ext, padded = {}, set()
    for iv, p in zip(block.iter_vars, padding):
        ext = iv.dom.extent
        new = const(-(-ext.value // p) * p, ext.dtype) if isinstance(ext, IntImm) else (
            ana.simplify(floordiv(ext + (p - 1), p) * p))  # fmt: skip
        if not ana.can_prove(new == ext):
            padded.add(iv.var)
        new_ext[iv.var] = new if iv.var in padded else ext
    if not padded:
        return func
    _check_reduction(block, padded, what)
    reads, writes = access(block)
    written = {w.buffer for w in writes}
    _check_other(other, padded, written, what)
    _check_outputs(func, realize, written, index_vars, padded, what)
    swap, copies_in, copies_out, allocs = {}, [], [], []
    for buf, idx in index_vars.items():
        if not any(v in padded for v in idx):
            continue
        for d, v in zip(buf.shape, idx):
            if not ana.can_prove(d == _old_extent(block, v)):
                raise ScheduleError(
                    f"cannot {what}: dimension {d} of {buf.name} is not the extent of {v.name}, the iter var "
                    f"indexing it"
                )
        pad_name = f"{buf.name}_pad"
        if find_block_path(func.body, pad_name) is not None:
            raise ScheduleError(f"cannot {what}: a block named {pad_name!r} already exists")
        new_buf = decl_buffer(tuple(new_ext[v] for v in idx), buf.dtype, pad_name, scope=buf.scope)
        swap[buf] = new_buf
        allocs.append(new_buf)
        if buf in written:
            copies_out.append(_copy(pad_name, new_buf, buf, buf.shape, None))
        else:
            conds = [(k, d) for k, (d, n) in enumerate(zip(buf.shape, new_buf.shape)) if not _same(d, n)]
            copies_in.append(_copy(pad_name, buf, new_buf, new_buf.shape, conds))
    allocs.sort(key=lambda b: any(swap[w] is b for w in written if w in swap))  # inputs first
    new_block = _Swap(swap).visit_stmt(block)
    new_block = new_block.replace(
        iter_vars=tuple(iv.replace(dom=Range(iv.dom.min, new_ext[iv.var])) for iv in block.iter_vars)
    )
    nest = realize.replace(block=new_block)
    for lp in reversed(loops):
        nest = lp.replace(extent=new_ext[next(v for v, val in zip(block.iter_vars, realize.iter_values)
                                              if val is lp.loop_var).var], body=nest)  # fmt: skip
    scope = enclosing_block(path)
    stmts = list(scope.body.seq) if isinstance(scope.body, SeqStmt) else [scope.body]
    pos = next(k for k, s in enumerate(stmts) if s is loops[0])
    stmts[pos : pos + 1] = copies_in + [nest] + copies_out
    new_scope = scope.replace(body=SeqStmt.flatten(*stmts), alloc_buffers=scope.alloc_buffers + tuple(allocs))
    return func.with_body(replace_stmts(func.body, {scope: new_scope}))


def _old_extent(block: Block, var: Var):
    return next(iv.dom.extent for iv in block.iter_vars if iv.var is var)


class _Swap(StmtExprMutator):
    def __init__(self, mapping: dict):
        self.mapping = mapping

    def visit_buffer(self, buffer):
        return self.mapping.get(buffer, buffer)


def _copy(name: str, src, dst, shape, conds):
    """Loops over `shape` around block `name`: dst[v] = src[v], or 0 where some v[k] >= d of
    `conds` ((k, d) pairs)."""
    ivs = [IterVar(Range(const(0, d.dtype), d), Var(f"v{k}", d.dtype), IterType.DATA_PAR)
           for k, d in enumerate(shape)]  # fmt: skip
    idx = [iv.var for iv in ivs]
    value = src[tuple(idx)]
    if conds:
        guard = None
        for k, d in conds:
            cond = idx[k] < d
            guard = cond if guard is None else logical_and(guard, cond)
        value = if_then_else(guard, value, const(0, src.dtype))
    block = Block(tuple(ivs), (BufferRegion.from_point(src, idx),), (BufferRegion.from_point(dst, idx),),
                  name, dst.vstore(idx, value))  # fmt: skip
    loop_vars = [Var(f"i{k}", d.dtype) for k, d in enumerate(shape)]
    stmt = BlockRealize(tuple(loop_vars), const(True), block)
    for var, d in reversed(list(zip(loop_vars, shape))):
        stmt = For(var, const(0, d.dtype), d, ForKind.SERIAL, stmt)
    return stmt
