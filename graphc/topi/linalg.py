"""`matmul` as a TE compute with numpy semantics: 1-d operands promoted, batch dims broadcast.

>>> from graphc import te, topi
>>> a = te.placeholder((2, 1, 3, 4), "float16", name="a")
>>> b = te.placeholder((5, 4, 6), "float16", name="b")
>>> c = topi.matmul(a, b, out_dtype="float32")
>>> [int(d) for d in c.shape], c.dtype
([2, 5, 3, 6], 'float32')
"""

from __future__ import annotations

from .. import te
from ..tir import expr as _e
from .broadcast import broadcast_shape


def _is_one(d) -> bool:
    return isinstance(d, _e.IntImm) and d.value == 1


def matmul(a: te.Tensor, b: te.Tensor, out_dtype: str | None = None, name: str = "T_matmul") -> te.Tensor:
    """`a @ b`, multiplying and accumulating in `out_dtype` (default: `a`'s dtype)."""
    out_dtype = out_dtype or a.dtype
    a_vec, b_vec = len(a.shape) == 1, len(b.shape) == 1
    a_batch, b_batch = tuple(a.shape[:-2]), tuple(b.shape[:-2])
    batch = broadcast_shape(a_batch, b_batch) if (a_batch or b_batch) else ()
    nb = len(batch)
    k = te.reduce_axis((_e.const(0, a.shape[-1].dtype), a.shape[-1]), name="k")
    out_shape = batch + (() if a_vec else (a.shape[-2],)) + (() if b_vec else (b.shape[-1],))

    def batch_index(own, idx):
        off = nb - len(own)
        return [
            _e.const(0, idx[off + j].dtype) if _is_one(d) and not _is_one(batch[off + j]) else idx[off + j]
            for j, d in enumerate(own)
        ]

    def f(*idx):
        rest = idx[nb:]
        ai = batch_index(a_batch, idx) + ([] if a_vec else [rest[0]]) + [k.var]
        bi = batch_index(b_batch, idx) + [k.var] + ([] if b_vec else [rest[-1]])
        return te.sum(_e.cast(a(*ai), out_dtype) * _e.cast(b(*bi), out_dtype), axis=k)

    return te.compute(out_shape, f, name=name)
