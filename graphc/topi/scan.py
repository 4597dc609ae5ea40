"""Scans (`cumsum`, `cumprod`) as TIR kernels, and `extern_func`, which wraps such kernels.

TE cannot carry a value from one loop iteration to the next, so the scans here, the sorts in
`topi.sort` and the scatters in `topi.scatter_gather` are TIR statements written directly.
`extern_func(name, inputs, outputs, body)` (TVM's `te.extern`, returning the PrimFunc) turns a
statement over the inputs' and outputs' buffers into a PrimFunc in block form: one opaque
block under the root, reading every input and writing every output. Its parameters are the
inputs, then the symbolic sizes no buffer shape binds, then the outputs (`call_te`'s order).

>>> from graphc import te, topi
>>> x = te.placeholder((2, 3), "float32", name="x")
>>> f = topi.cumsum(x, axis=1)
>>> [b.name for b in f.buffers], f.attrs["op_pattern"]
(['x', 'T_cumsum'], 8)
>>> [int(d) for d in topi.cumprod(x).buffers[1].shape]
[6]
"""

from __future__ import annotations

from collections.abc import Callable

from .. import te
from ..tir import expr as _e
from ..tir.analysis.var_use import used_vars
from ..tir.arith import Analyzer
from ..tir.buffer import Buffer, decl_buffer
from ..tir.expr import PrimExpr, Var
from ..tir.function import PrimFunc
from ..tir.stmt import Block, BlockRealize, BufferRegion, BufferStore, For, ForKind, IfThenElse, SeqStmt

__all__ = ["cumprod", "cumsum", "extern_func", "loop_nest"]

OPAQUE_PATTERN = 8  # relax OpPatternKind.kOpaque; topi knows nothing of relax


def i64(d) -> PrimExpr:
    """`d` (an int or an integer PrimExpr) as an int64 expression."""
    return _e.const(d, "int64") if isinstance(d, int) else _e.cast(d, "int64")


def loop_nest(extents, body: Callable, names: str = "ijklmnopqrstuvw") -> object:
    """Serial loops over `extents` (outermost first) around `body(*loop_vars)` (int64 vars)."""
    loop_vars = [Var(f"{names[k % len(names)]}{k // len(names) or ''}", "int64") for k in range(len(extents))]
    stmt = body(*loop_vars)
    for v, extent in reversed(list(zip(loop_vars, extents))):
        stmt = For(v, _e.const(0, "int64"), i64(extent), ForKind.SERIAL, stmt)
    return stmt


def extern_func(name: str, inputs: list, outputs: list, body: Callable, scratch: tuple = ()) -> PrimFunc:
    """A PrimFunc running `body(*input_buffers, *output_buffers) -> Stmt` as one opaque block.

    `inputs` are te placeholders (their shapes, dtypes and names give the buffers); `outputs`
    are `(shape, dtype, name)` triples; `scratch` are buffers `body` uses as working memory
    (allocated by the block). The function is marked opaque (`op_pattern` 8) for fusion.
    """
    in_bufs = [decl_buffer(tuple(i64(d) for d in t.shape), t.dtype, t.name) for t in inputs]
    out_bufs = [decl_buffer(tuple(i64(d) for d in shape), dtype, oname) for shape, dtype, oname in outputs]
    stmt = body(*in_bufs, *out_bufs)
    block = Block(
        (),
        tuple(BufferRegion.full(b) for b in in_bufs),
        tuple(BufferRegion.full(b) for b in out_bufs),
        name,
        stmt,
        alloc_buffers=tuple(scratch),
    )
    root = Block((), (), (), "root", BlockRealize((), _e.const(True), block))
    # Sizes that no buffer has as a bare dimension are passed as scalars (as call_te does).
    bufs = in_bufs + out_bufs
    bound = {id(d) for b in bufs for d in b.shape if isinstance(d, Var)}
    shapes = [d for b in [*bufs, *scratch] for d in b.shape]
    scalars = [v for v in used_vars(*shapes) if id(v) not in bound]
    handles = [Var(f"var_{b.name}", "handle") for b in bufs]
    params = handles + scalars  # inputs, outputs, then sizes: call_te's (TVM's) order
    return PrimFunc(
        params,
        BlockRealize((), _e.const(True), root),
        None,
        dict(zip(handles, bufs)),
        {"global_symbol": "main", "tir.noalias": True, "op_pattern": OPAQUE_PATTERN},
    )


def seq(*stmts):
    return SeqStmt.flatten(list(stmts))


def store(buf: Buffer, value, index) -> BufferStore:
    return BufferStore(buf, _e.cast(value, buf.dtype), tuple(index))


def eq(a, b) -> PrimExpr:
    return _e._compare(_e.EQ, a, _e.cast(b, a.dtype) if isinstance(b, PrimExpr) else b)


def num_elements(shape) -> PrimExpr:
    total = _e.const(1, "int64")
    for d in shape:
        total = total * i64(d)
    return Analyzer().simplify(total)


def _scan(data: te.Tensor, axis, dtype, exclusive: bool, combine, identity: int, name: str) -> PrimFunc:
    dtype = dtype or data.dtype
    ndim = len(data.shape)
    flat = axis is None
    axis = ndim - 1 if flat else int(axis) % ndim
    out_shape = (num_elements(data.shape),) if flat else tuple(data.shape)

    def body(x, out):
        def step(*idx):
            k, n = idx[axis], x.shape[axis]
            if flat:
                pos = _e.const(0, "int64")
                for i, d in zip(idx, x.shape):
                    pos = pos * d + i
                at, prev, nxt = (pos,), (pos - 1,), (pos + 1,)
                first, last = eq(pos, 0), eq(pos, out.shape[0] - 1)
            else:
                at = idx
                prev = tuple(i - 1 if a == axis else i for a, i in enumerate(idx))
                nxt = tuple(i + 1 if a == axis else i for a, i in enumerate(idx))
                first, last = eq(k, 0), eq(k, n - 1)
            value = _e.cast(x[idx], dtype)
            if not exclusive:
                # out[k] = out[k-1] (+) x[k]; the first element has no predecessor.
                return IfThenElse(first, store(out, value, at), store(out, combine(out[prev], value), at))
            # out[0] = identity; out[k+1] = out[k] (+) x[k]: every read stays in bounds.
            return seq(
                IfThenElse(first, store(out, _e.const(identity, dtype), at)),
                IfThenElse(_e.logical_not(last), store(out, combine(out[at], value), nxt)),
            )

        return loop_nest(x.shape, step)

    return extern_func(name, [data], [(out_shape, dtype, f"T_{name}")], body)


def cumsum(data: te.Tensor, axis=None, dtype=None, exclusive: bool = False) -> PrimFunc:
    """Running sums along `axis` (None: of the flattened `data`), accumulated in `dtype`.

    `exclusive` shifts the sums by one: element k holds the sum of the elements before k.
    """
    return _scan(data, axis, dtype, exclusive, lambda a, b: a + b, 0, "cumsum")


def cumprod(data: te.Tensor, axis=None, dtype=None, exclusive: bool = False) -> PrimFunc:
    """Running products along `axis` (None: of the flattened `data`), accumulated in `dtype`."""
    return _scan(data, axis, dtype, exclusive, lambda a, b: a * b, 1, "cumprod")
