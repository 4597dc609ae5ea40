"""float32 accumulators for float16/bfloat16 sums: rounded once, when the sum is done.

The Relax operators of a float16 model (matmul, conv2d, sum, mean, the norms) are legalized
with an accumulator of their own dtype: `C: float16; C[i, j] = C[i, j] + A[i, k] * B[k, j]`.
Run as written, every step of the sum rounds to 11 bits of mantissa, so a dot product over
768 terms loses about as many bits as it has; PyTorch (cuBLAS, its CPU kernels) accumulates
float16 and bfloat16 products in float32 and rounds once. `promote_accumulators(func)` gives
every such reduction the same float32 accumulator:

- a reduction block whose update is `C[v] = C[v] + value` (a sum: matrix products,
  convolutions, row sums) with `C` of dtype float16 or bfloat16 and a constant `init` now
  accumulates into a new float32 buffer `C_f32`, its `value` computed in float32 (the 16-bit
  operands widened, which is exact; their products then are exact too);
- a new elementwise block right after it writes `C[v] = float16(C_f32[v])`: the one rounding.
  The GPU rules inline it into the epilogue or the write-back of the register tile, so the
  accumulator a thread keeps in registers is the float32 one.

Only sums change: a max or min of 16-bit values is exact in any type. The function computes
the same sums with one rounding instead of one per term: results are at least as close to
the exact sum (a float32 reference) as before, and no longer bit-identical to a float16
accumulation.

>>> from graphc import te
>>> A = te.placeholder((4, 64), "float16", name="A")
>>> k = te.reduce_axis((0, 64), "k")
>>> S = te.compute((4,), lambda i: te.sum(A[i, k], axis=k), name="S")
>>> func = promote_accumulators(te.create_prim_func([A, S]))
>>> [(b.name, b.dtype) for b in func.body.block.alloc_buffers]
[('S_f32', 'float32')]
"""

from __future__ import annotations

from ...tir.buffer import decl_buffer
from ...tir.expr import (
    Add,
    BinaryOp,
    BufferLoad,
    Call,
    Cast,
    FloatImm,
    Max,
    Min,
    PrimExpr,
    Range,
    Select,
    Var,
    const,
)
from ...tir.function import PrimFunc
from ...tir.functor import StmtExprMutator
from ...tir.stmt import (
    Block,
    BlockRealize,
    BufferRegion,
    BufferStore,
    For,
    ForKind,
    IterType,
    IterVar,
    SeqStmt,
)

_NARROW = ("float16", "bfloat16")


def _widen(e: PrimExpr) -> PrimExpr:
    """`e` (a 16-bit float expression) computed in float32: loads and other leaves widened, the
    arithmetic between them done in float32."""
    if e.dtype not in _NARROW:
        return e
    if isinstance(e, FloatImm):
        return FloatImm("float32", e.value)
    if isinstance(e, BinaryOp) and type(e) in _ARITH:
        return type(e)(_widen(e.a), _widen(e.b), "float32")
    if isinstance(e, Select):
        return Select(e.condition, _widen(e.true_value), _widen(e.false_value), "float32")
    if isinstance(e, Call) and e.op == "tir.if_then_else":
        cond, a, b = e.args
        return Call("float32", e.op, (cond, _widen(a), _widen(b)))
    return Cast("float32", e)  # a load, a cast, a math call: its 16-bit value, widened exactly


def _arith():
    from ...tir.expr import Mul, Sub

    return (Add, Sub, Mul, Min, Max)


_ARITH = _arith()


def _sum_update(block: Block):
    """(the accumulated buffer, its indices, the added value) when `block` is a 16-bit sum
    (module docstring), else None."""
    if block.init is None or len(block.writes) != 1 or block.match_buffers:
        return None
    store, init = block.body, block.init
    if not isinstance(store, BufferStore) or not isinstance(init, BufferStore):
        return None
    buf = store.buffer
    if buf.dtype not in _NARROW or init.buffer is not buf or not isinstance(init.value, FloatImm):
        return None
    value = store.value
    if not isinstance(value, Add):
        return None

    def is_acc(x) -> bool:
        return (isinstance(x, BufferLoad) and x.buffer is buf and len(x.indices) == len(store.indices)
                and all(a is b or _same(a, b) for a, b in zip(x.indices, store.indices)))

    if is_acc(value.a):
        return buf, store.indices, value.b
    if is_acc(value.b):
        return buf, store.indices, value.a
    return None


def _same(a, b) -> bool:
    from ...ir.structural import structural_equal

    return structural_equal(a, b)


def _promote(block: Block, found) -> tuple[Block, object, object]:
    """(the block accumulating into a float32 buffer, that buffer, the nest casting it back)."""
    buf, indices, value = found
    acc = decl_buffer(buf.shape, "float32", f"{buf.name}_f32")
    body = BufferStore(acc, Add(acc[tuple(indices)], _widen(value), "float32"), tuple(indices))
    init = BufferStore(acc, FloatImm("float32", block.init.value.value), tuple(block.init.indices))
    writes = tuple(BufferRegion(acc, r.region) if r.buffer is buf else r for r in block.writes)
    reads = tuple(BufferRegion(acc, r.region) if r.buffer is buf else r for r in block.reads)
    return block.replace(body=body, init=init, writes=writes, reads=reads), acc, _cast_nest(buf, acc)


class _Replace(StmtExprMutator):
    def __init__(self, old: Block, new: Block):
        self.old, self.new = old, new

    def visit_Block(self, op: Block):
        return self.new if op is self.old else op


def _cast_nest(buf, acc) -> For:
    """`for v..: buf[v] = buf.dtype(acc[v])`, a block of its own."""
    loops = [Var(f"ax{n}", s.dtype) for n, s in enumerate(buf.shape)]
    iters = [IterVar(Range(const(0, s.dtype), s), Var(f"v_ax{n}", s.dtype), IterType.DATA_PAR)
             for n, s in enumerate(buf.shape)]
    idx = tuple(iv.var for iv in iters)
    region = tuple(Range(iv.var, const(1, iv.var.dtype)) for iv in iters)
    block = Block(tuple(iters), (BufferRegion(acc, region),), (BufferRegion(buf, region),),
                  f"{buf.name}_cast", BufferStore(buf, Cast(buf.dtype, acc[idx]), idx))
    stmt = BlockRealize(tuple(loops), const(True, "bool"), block)
    for lv, s in reversed(list(zip(loops, buf.shape))):
        stmt = For(lv, const(0, s.dtype), s, ForKind.SERIAL, stmt)
    return stmt


def promote_accumulators(func: PrimFunc) -> PrimFunc:
    """`func` with float32 accumulators for its 16-bit sums (module docstring); `func` itself
    when it has none. Only a loop nest of the root block holding one block is rewritten (the
    rounding block goes right after it)."""
    from ...tir.schedule.state import walk

    if not isinstance(func, PrimFunc):
        return func
    root = func.body
    if not isinstance(root, BlockRealize) or root.block.name_hint != "root":
        return func
    top = root.block.body
    stmts = list(top.seq) if isinstance(top, SeqStmt) else [top]
    out, allocs = [], []
    for stmt in stmts:
        blocks = [s for s in walk(stmt) if isinstance(s, Block)]
        found = _sum_update(blocks[0]) if len(blocks) == 1 else None
        if found is None:
            out.append(stmt)
            continue
        new, acc, cast = _promote(blocks[0], found)
        out += [_Replace(blocks[0], new).visit_stmt(stmt), cast]
        allocs.append(acc)
    if not allocs:
        return func
    block = root.block.replace(body=SeqStmt.flatten(*out), alloc_buffers=(*root.block.alloc_buffers, *allocs))
    return func.with_body(root.replace(block=block))


__all__ = ["promote_accumulators"]
