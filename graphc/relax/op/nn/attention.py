"""Scaled dot-product attention (`relax.op.nn.attention`), in TVM's layout and with TVM's attributes.

query is `(batch, seq_len, num_heads, head_dim)`, key `(batch, seq_len_kv, num_kv_heads,
head_dim)`, value `(batch, seq_len_kv, num_kv_heads, head_dim_v)`; the result is `(batch,
seq_len, num_heads, head_dim_v)`. `num_heads` must be a multiple of the key's and the value's
head counts (grouped-query attention). PyTorch's `scaled_dot_product_attention` uses `(batch,
heads, seq, dim)`: a frontend permutes axes 1 and 2 of q, k, v and of the result, and passes
`attn_mask` as `bias` (bool: True attends; float: added to the scores) and `is_causal` as
`causal_mask="TopLeft"`.

One registry entry takes 3 arguments or 4 (with `bias`); TVM splits the latter off as
`relax.nn.attention_bias`.

>>> from graphc import relax, tir
>>> from graphc.relax.op.nn.attention import attention  # relax.op.nn.attention
>>> n = tir.Var("n", "int64")
>>> q = relax.Var("q", relax.TensorStructInfo((2, n, 8, 16), "float32"))
>>> kv = relax.Var("kv", relax.TensorStructInfo((2, 10, 2, 16), "float32"))
>>> bb = relax.BlockBuilder()
>>> bb.normalize(attention(q, kv, kv, causal_mask="BottomRight")).struct_info
R.Tensor((2, n, 8, 16), dtype="float32")
>>> v = relax.Var("v", relax.TensorStructInfo((2, 12, 2, 16), "float32"))
>>> bb.normalize(attention(q, kv, v))
Traceback (most recent call last):
  ...
graphc.errors.TypeInferenceError: 'nn.attention' expects value to have key's sequence length 10,
got R.Tensor((2, 12, 2, 16), dtype="float32")
"""

from __future__ import annotations

from .... import topi
from ....errors import TypeInferenceError
from ....tir import expr as _e
from ...expr import Call
from ...struct_info import TensorStructInfo, prim_text
from ..infer import analyzer_of, is_const, op_label, provably_different, tensor_arg
from ..registry import Op, OpPatternKind, register_op

__all__ = ["attention"]

CAUSAL_MASKS = ("TopLeft", "BottomRight")
_QKV = ("query", "key", "value")


def _check_attrs(call) -> None:
    causal, window, scale = call.attrs["causal_mask"], call.attrs["window_size"], call.attrs["scale"]
    if causal is not None and causal not in CAUSAL_MASKS:
        raise TypeInferenceError(
            f"{op_label(call)} expects causal_mask to be None, 'TopLeft' or 'BottomRight', got {causal!r}")
    if window is not None:
        if isinstance(window, bool) or not isinstance(window, int) or window <= 0:
            raise TypeInferenceError(
                f"{op_label(call)} expects window_size to be a positive int, got {window!r}")
        if causal is None:
            raise TypeInferenceError(
                f"{op_label(call)} expects a causal_mask with window_size={window} (the window ends at "
                "the causal diagonal); set causal_mask='TopLeft' or 'BottomRight'")
    if scale is not None and not isinstance(scale, int | float):
        raise TypeInferenceError(f"{op_label(call)} expects scale to be None or a float, got {scale!r}")


def _check_dtypes(call, q: TensorStructInfo, others: list, bias: TensorStructInfo | None) -> None:
    if not q.is_unknown_dtype and not q.dtype.startswith(("float", "bfloat")):
        raise TypeInferenceError(f"{op_label(call)} requires query to have a float dtype, got {q}")
    for sinfo, name in others:
        if not (q.is_unknown_dtype or sinfo.is_unknown_dtype) and sinfo.dtype != q.dtype:
            raise TypeInferenceError(
                f"{op_label(call)} expects {name} to have query's dtype {q.dtype}, got {sinfo}")
    if bias is None or q.is_unknown_dtype or bias.is_unknown_dtype:
        return
    if bias.dtype not in (q.dtype, "bool"):
        raise TypeInferenceError(
            f"{op_label(call)} expects bias to have query's dtype {q.dtype} (added to the scores) "
            f"or bool (a mask), got {bias}")


def _same(call, analyzer, a, b, what: str, name: str, sinfo, ref: str) -> None:
    if provably_different(a, b, analyzer):
        raise TypeInferenceError(
            f"{op_label(call)} expects {name} to have {ref}'s {what} {prim_text(a)}, got {sinfo}")


def _divides(call, analyzer, heads, kv_heads, name: str, sinfo) -> None:
    if is_const(heads) and is_const(kv_heads):
        bad = kv_heads.value == 0 or heads.value % kv_heads.value != 0
    else:
        bad = analyzer.can_prove(_e.floormod(heads, kv_heads) != 0)
    if bad:
        raise TypeInferenceError(
            f"{op_label(call)} expects {name}'s number of heads to divide query's {prim_text(heads)}, "
            f"got {sinfo}")


def _check_bias(call, analyzer, bias: TensorStructInfo, want: tuple) -> None:
    if bias.ndim == -1:
        return
    if not 1 <= bias.ndim <= 4:
        raise TypeInferenceError(
            f"{op_label(call)} expects bias to have 1 to 4 dimensions broadcasting to (batch, num_heads, "
            f"seq_len, seq_len_kv), got {bias}")
    if bias.shape_values is None or want is None:
        return
    for d, w in zip(reversed(bias.shape_values), reversed(want)):
        if not is_const(d, 1) and provably_different(d, w, analyzer):
            shape = "(" + ", ".join(prim_text(x) for x in want) + ")"
            raise TypeInferenceError(
                f"{op_label(call)} expects bias to broadcast to (batch, num_heads, seq_len, seq_len_kv) = "
                f"{shape}, got {bias}")


def _infer_attention(call, bb):
    if len(call.args) not in (3, 4):
        raise TypeInferenceError(
            f"{op_label(call)} expects 3 arguments (query, key, value) or 4 (and bias), got {len(call.args)}")
    _check_attrs(call)
    q, k, v = (tensor_arg(call, i, name) for i, name in enumerate(_QKV))
    bias = tensor_arg(call, 3, "bias") if len(call.args) == 4 else None
    _check_dtypes(call, q, [(k, "key"), (v, "value")], bias)
    for sinfo, name in ((q, "query"), (k, "key"), (v, "value")):
        if sinfo.ndim not in (-1, 4):
            raise TypeInferenceError(
                f"{op_label(call)} expects {name} to have 4 dimensions (batch, seq_len, num_heads, "
                f"head_dim), got {sinfo}")
    analyzer = analyzer_of(bb)
    dq, dk, dv = q.shape_values, k.shape_values, v.shape_values
    if dq is not None and dk is not None:
        _same(call, analyzer, dq[0], dk[0], "batch size", "key", k, "query")
        _same(call, analyzer, dq[3], dk[3], "head_dim", "key", k, "query")
        _divides(call, analyzer, dq[2], dk[2], "key", k)
    if dq is not None and dv is not None:
        _same(call, analyzer, dq[0], dv[0], "batch size", "value", v, "query")
        _divides(call, analyzer, dq[2], dv[2], "value", v)
    if dk is not None and dv is not None:
        _same(call, analyzer, dk[1], dv[1], "sequence length", "value", v, "key")
    if bias is not None:
        seq_kv = dk[1] if dk is not None else (dv[1] if dv is not None else None)
        want = (dq[0], dq[2], dq[1], seq_kv) if dq is not None and seq_kv is not None else None
        _check_bias(call, analyzer, bias, want)
    if dq is None or dv is None:
        return TensorStructInfo(dtype=q.dtype, ndim=4)
    return TensorStructInfo((dq[0], dq[1], dq[2], dv[3]), q.dtype)


def _legalize_attention(bb, call):
    attrs = call.attrs
    name = "attention" if len(call.args) == 3 else "attention_bias"
    return bb.call_te(
        topi.nn.attention, *call.args, scale=attrs["scale"], causal_mask=attrs["causal_mask"],
        window_size=attrs["window_size"], primfunc_name_hint=name,
    )


register_op(
    "relax.nn.attention",
    -1,
    _infer_attention,
    legalize=_legalize_attention,
    pattern=OpPatternKind.kOpaque,
    attrs={
        "scale": "the factor on the scores; None means 1 / sqrt(head_dim)",
        "causal_mask": "None, 'TopLeft' (key j <= query i) or 'BottomRight' "
                       "(j <= i + |seq_len - seq_len_kv|)",
        "window_size": "None, or how many keys ending at the causal diagonal each query sees",
    },
    description="Multi-head scaled dot-product attention, softmax(q k^T * scale + bias) v.",
)


def attention(query, key, value, bias=None, scale: float | None = None, causal_mask: str | None = None,
              window_size: int | None = None) -> Call:
    """`softmax(query @ key^T * scale + bias) @ value` per batch and head, in TVM's layout.

    `bias` broadcasts to `(batch, num_heads, seq_len, seq_len_kv)`: a float bias is added to
    the scores, a bool one masks them (True attends). A query row that may attend to nothing
    gives zeros (as PyTorch).
    """
    args = [query, key, value] + ([] if bias is None else [bias])
    attrs = {
        "scale": None if scale is None else float(scale),
        "causal_mask": causal_mask,
        "window_size": None if window_size is None else int(window_size),
    }
    return Call(Op.get("relax.nn.attention"), args, attrs)
