"""Scaled dot-product attention as one TE computation: scores, masked softmax, weighted values.

Layout as TVM's `relax.nn.attention`: query `(batch, seq_len, num_heads, head_dim)`, key
`(batch, seq_len_kv, num_kv_heads, head_dim)`, value `(batch, seq_len_kv, num_kv_heads,
head_dim_v)`, result `(batch, seq_len, num_heads, head_dim_v)`. Query head `h` reads key/value
head `h // (num_heads // num_kv_heads)` (grouped-query attention).

>>> from graphc import te
>>> from graphc.topi.nn.attention import attention  # topi.nn.attention
>>> q = te.placeholder((1, 4, 2, 8), "float32", name="q")
>>> kv = te.placeholder((1, 6, 1, 8), "float32", name="kv")
>>> out = attention(q, kv, kv, causal_mask="BottomRight")
>>> [int(d) for d in out.shape], out.op.name
([1, 4, 2, 8], 'T_attention')
"""

from __future__ import annotations

from ... import te
from ...tir import expr as _e
from ...tir import op as _op
from ..broadcast import broadcast_index

__all__ = ["attention"]


def _i64(value) -> _e.PrimExpr:
    return _e.const(value, "int64") if isinstance(value, int) else _e.cast(value, "int64")


def attention_mask(i, j, seq_len, seq_len_kv, causal_mask: str | None, window_size: int | None):
    """Whether query `i` may attend to key `j` under the causal mask and window (None: always).

    "TopLeft" keeps `j <= i`; "BottomRight" keeps `j <= i + |seq_len - seq_len_kv|` (TVM's
    definition); `window_size` `w` further keeps only the `w` keys ending at that diagonal.
    """
    if causal_mask is None:
        return None
    i, j = _i64(i), _i64(j)
    diagonal = i
    if causal_mask == "BottomRight":
        diagonal = i + _op.abs(_i64(seq_len) - _i64(seq_len_kv))
    elif causal_mask != "TopLeft":
        raise ValueError(
            f"topi.nn.attention: causal_mask must be 'TopLeft' or 'BottomRight', got {causal_mask!r}")
    keep = j <= diagonal
    if window_size is not None:
        keep = keep & (diagonal - j < _e.const(int(window_size), "int64"))
    return keep


def attention(query: te.Tensor, key: te.Tensor, value: te.Tensor, bias: te.Tensor | None = None,
              scale: float | None = None, causal_mask: str | None = None,
              window_size: int | None = None) -> te.Tensor:
    """`softmax(query @ key^T * scale + bias, masked) @ value` per batch and head.

    `bias` broadcasts (numpy rules) to `(batch, num_heads, seq_len, seq_len_kv)`: a float bias
    is added to the scores, a bool one keeps the scores where it is True (PyTorch's `attn_mask`).
    A query row with nothing left to attend to gives zeros, as PyTorch does.
    """
    batch, seq_len, num_heads, head_dim = query.shape
    seq_len_kv, kv_heads = key.shape[1], key.shape[2]
    v_heads, head_dim_v = value.shape[2], value.shape[3]
    dtype = query.dtype
    k_group = _e.floordiv(num_heads, kv_heads)
    v_group = _e.floordiv(num_heads, v_heads)
    if scale is None:
        factor = _op.rsqrt(_e.cast(head_dim, dtype))
    else:
        factor = _e.const(float(scale), dtype)
    zero = _e.const(0, head_dim.dtype)

    d = te.reduce_axis((zero, head_dim), name="d")
    score = te.compute(
        (batch, num_heads, seq_len, seq_len_kv),
        lambda b, h, i, j: te.sum(query(b, i, h, d.var) * key(b, j, _e.floordiv(h, k_group), d.var), axis=d),
        name="T_attention_score",
    )
    score_shape = score.shape
    bool_mask = bias is not None and bias.dtype == "bool"

    def logit(b, h, i, j):
        x = score(b, h, i, j) * factor
        if bias is not None and not bool_mask:
            x = x + bias(*broadcast_index(bias, score_shape, (b, h, i, j)))
        return x

    def valid(b, h, i, j):
        keep = attention_mask(i, j, seq_len, seq_len_kv, causal_mask, window_size)
        if bool_mask:
            allowed = bias(*broadcast_index(bias, score_shape, (b, h, i, j)))
            keep = allowed if keep is None else keep & allowed
        return keep

    def reduce_over_keys(fn, combine, identity, name):
        # masked keys contribute the reduction's identity (a select, not a `where`: the block
        # stays `B = B <op> value`, which a schedule can factor into vector partials)
        def f(b, h, i):
            j = te.reduce_axis((zero, seq_len_kv), name="j")
            keep = valid(b, h, i, j.var)
            value = fn(b, h, i, j.var)
            if keep is not None:
                value = _e.select(keep, value, identity)
            return combine(value, axis=j)

        return te.compute((batch, num_heads, seq_len), f, name=name)

    row_max = reduce_over_keys(logit, te.max, _op.min_value(dtype), "T_attention_max")
    def exp_logit(b, h, i, j):  # computed once: the row sums and the weights both read it
        e = _op.exp(logit(b, h, i, j) - row_max(b, h, i))
        keep = valid(b, h, i, j)
        return e if keep is None else _e.select(keep, e, _e.const(0, dtype))

    exps = te.compute(score_shape, exp_logit, name="T_attention_exp")

    def sum_exps(b, h, i):
        j = te.reduce_axis((zero, seq_len_kv), name="j")
        return te.sum(exps(b, h, i, j.var), axis=j)

    row_sum = te.compute((batch, num_heads, seq_len), sum_exps, name="T_attention_sum")

    def prob(b, h, i, j):
        total = row_sum(b, h, i)
        if valid(b, h, i, j) is not None:
            # a row with no key left sums to 0: its weights are all 0 (not 0 / 0)
            total = _e.select(total > _e.const(0, dtype), total, _e.const(1, dtype))
        return exps(b, h, i, j) / total

    weights = te.compute(score_shape, prob, name="T_attention_softmax")

    def out(b, i, h, e):
        j = te.reduce_axis((zero, seq_len_kv), name="j")
        return te.sum(weights(b, h, i, j.var) * value(b, j.var, _e.floordiv(h, v_group), e), axis=j)

    return te.compute((batch, seq_len, num_heads, head_dim_v), out, name="T_attention")
