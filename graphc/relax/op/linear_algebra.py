"""Products of tensors: `matmul` (numpy semantics: 1-d operands promoted then squeezed, batch
dims broadcast), `einsum` (numpy's subscripts, `...` included) and `outer` (of two vectors).

>>> from graphc import relax, tir
>>> from graphc.relax.op.linear_algebra import einsum, outer
>>> b = tir.Var("b", "int64")
>>> x = relax.Var("x", relax.TensorStructInfo((b, 1, 3, 4), "float16"))
>>> w = relax.Var("w", relax.TensorStructInfo((5, 4, 6), "float16"))
>>> bb = relax.BlockBuilder()
>>> bb.normalize(relax.op.matmul(x, w, out_dtype="float32")).struct_info
R.Tensor((b, 5, 3, 6), dtype="float32")
>>> bb.normalize(einsum((x, w), "...ij,...jk->...ik")).struct_info
R.Tensor((b, 5, 3, 6), dtype="float16")
>>> v = relax.Var("v", relax.TensorStructInfo((b,), "float16"))
>>> bb.normalize(outer(v, v)).struct_info
R.Tensor((b, b), dtype="float16")
>>> bb.normalize(einsum((x, w), "ij,jk->ik"))
Traceback (most recent call last):
  ...
graphc.errors.TypeInferenceError: 'einsum' expects operand 0 to fit subscripts 'ij,jk->ik': einsum term 'ij'
needs 2 dimension(s), got 4; operand 0 is R.Tensor((b, 1, 3, 4), dtype="float16")
"""

from __future__ import annotations

from ... import topi
from ...errors import TypeInferenceError
from ...topi.einsum import ELLIPSIS, parse_subscripts, split_term
from ..expr import Call, Tuple
from ..struct_info import UNKNOWN_DTYPE, TensorStructInfo, TupleStructInfo, prim_text
from .infer import (
    analyzer_of,
    attr_dtype,
    binary_dtype,
    broadcast_dims,
    is_const,
    op_label,
    provably_different,
    tensor_arg,
)
from .registry import Op, OpPatternKind, register_op
from .te_legalize import call_topi


def _infer_matmul(call, bb):
    a, b = tensor_arg(call, 0, "x1"), tensor_arg(call, 1, "x2")
    out_dtype = attr_dtype(call, "out_dtype")
    if out_dtype == UNKNOWN_DTYPE:
        out_dtype = binary_dtype(call, a, b)
    for sinfo, name in ((a, "x1"), (b, "x2")):
        if sinfo.ndim == 0:
            raise TypeInferenceError(
                f"{op_label(call)} expects {name} to have at least 1 "
                f"dimension, got {sinfo}")
    if a.ndim == -1 or b.ndim == -1:
        return TensorStructInfo(dtype=out_dtype, ndim=-1)
    ndim = max(a.ndim, b.ndim, 2) - (a.ndim == 1) - (b.ndim == 1)
    da, db = a.shape_values, b.shape_values
    if da is None or db is None:
        return TensorStructInfo(dtype=out_dtype, ndim=ndim)
    da = ((1,) + da) if len(da) == 1 else da
    db = (db + (1,)) if len(db) == 1 else db
    analyzer = analyzer_of(bb)
    k1, k2 = da[-1], db[-2]
    if provably_different(k1, k2, analyzer):
        raise TypeInferenceError(
            f"{op_label(call)} expects the reduction dimensions to match: x1 {a} has {_text(k1)} columns "
            f"but x2 {b} has {_text(k2)} rows")
    batch_a, batch_b = TensorStructInfo(da[:-2], a.dtype), TensorStructInfo(db[:-2], b.dtype)
    batch = broadcast_dims(call, batch_a, batch_b, analyzer)
    if batch is None:
        return TensorStructInfo(dtype=out_dtype, ndim=ndim)
    out = list(batch)
    if a.ndim != 1:
        out.append(da[-2])
    if b.ndim != 1:
        out.append(db[-1])
    return TensorStructInfo(tuple(out), out_dtype)


def _text(d) -> str:
    return prim_text(d)


def _out_dtype(call) -> dict:
    dtype = call.attrs.get("out_dtype")
    # the compute is named "matmul" like TVM's legalization (block and output buffer names)
    return {"out_dtype": None if dtype in (None, UNKNOWN_DTYPE) else dtype, "name": "matmul"}


register_op("relax.matmul", 2, _infer_matmul, legalize=call_topi(topi.matmul, "matmul", _out_dtype),
            pattern=OpPatternKind.kOutEWiseFusable,
            attrs={"out_dtype": "result dtype; void (the default) means the operands' dtype"},
            description="Matrix product with numpy matmul semantics.")


def matmul(x1, x2, out_dtype: str | None = None) -> Call:
    """`x1 @ x2` (numpy matmul), accumulating and returning `out_dtype` when given."""
    return Call(Op.get("relax.matmul"), [x1, x2], {"out_dtype": out_dtype or UNKNOWN_DTYPE})


def _einsum_operands(call) -> list[TensorStructInfo]:
    sinfo = call.args[0].struct_info
    if not isinstance(sinfo, TupleStructInfo):
        raise TypeInferenceError(
            f"{op_label(call)} expects operands to be a tuple of tensors (R.Tuple), got {sinfo}")
    if not sinfo.fields:
        raise TypeInferenceError(f"{op_label(call)} expects at least one operand, got an empty tuple")
    for k, f in enumerate(sinfo.fields):
        if not isinstance(f, TensorStructInfo):
            raise TypeInferenceError(
                f"{op_label(call)} expects operand {k} to be a tensor (R.Tensor), got {f}")
    return list(sinfo.fields)


def _einsum_dtype(call, operands) -> str:
    known = [(k, s) for k, s in enumerate(operands) if not s.is_unknown_dtype]
    for k, s in known[1:]:
        if s.dtype != known[0][1].dtype:
            raise TypeInferenceError(
                f"{op_label(call)} expects equal dtypes, got {known[0][1].dtype} and {s.dtype}: operand "
                f"{known[0][0]} is {known[0][1]}, operand {k} is {s}; cast one with relax.op.astype")
    return known[0][1].dtype if known else UNKNOWN_DTYPE


def _infer_einsum(call, bb):
    operands = _einsum_operands(call)
    subscripts = call.attrs["subscripts"]
    dtype = _einsum_dtype(call, operands)
    try:
        inputs, output = parse_subscripts(subscripts, len(operands))
    except ValueError as err:
        raise TypeInferenceError(f"{op_label(call)}: {err}") from None
    out_letters = output.replace(ELLIPSIS, "")
    if any(s.ndim == -1 for s in operands):
        # the rank is known only if no '...' is involved
        has_ellipsis = ELLIPSIS in output or any(ELLIPSIS in t for t in inputs)
        return TensorStructInfo(dtype=dtype, ndim=-1 if has_ellipsis else len(out_letters))
    analyzer = analyzer_of(bb)
    sizes: dict = {}  # letter -> (dim, operand index)
    batches = []
    known = all(s.shape_values is not None for s in operands)
    for k, (term, s) in enumerate(zip(inputs, operands)):
        try:
            labels, extra = split_term(term, s.ndim)
        except ValueError as err:
            raise TypeInferenceError(
                f"{op_label(call)} expects operand {k} to fit subscripts {subscripts!r}: {err}; "
                f"operand {k} is {s}") from None
        if s.shape_values is None:
            batches.append(None)
            continue
        start = labels.index("") if extra else 0
        batches.append(TensorStructInfo(s.shape_values[start:start + extra], s.dtype))
        for c, d in zip(labels, s.shape_values):
            if not c:
                continue
            if c not in sizes or is_const(sizes[c][0], 1):
                sizes[c] = (d, k)
                continue
            prev, prev_k = sizes[c]
            if not is_const(d, 1) and provably_different(d, prev, analyzer):
                raise TypeInferenceError(
                    f"{op_label(call)} expects the dimensions labelled {c!r} in {subscripts!r} to match: "
                    f"{_text(prev)} in operand {prev_k} {operands[prev_k]} and {_text(d)} in operand {k} {s}")
    batch = ()
    ellipsis_ndim = max(s.ndim - len(t.replace(ELLIPSIS, "")) for t, s in zip(inputs, operands))
    if known:
        batch = _broadcast_ellipsis(call, batches, analyzer)
        known = batch is not None
    if not known:
        ndim = len(out_letters) + (ellipsis_ndim if ELLIPSIS in output else 0)
        return TensorStructInfo(dtype=dtype, ndim=ndim)
    head, has_ellipsis, tail = output.partition(ELLIPSIS)
    shape = (tuple(sizes[c][0] for c in head) + (batch if has_ellipsis else ())
             + tuple(sizes[c][0] for c in tail))
    return TensorStructInfo(shape, dtype)


def _broadcast_ellipsis(call, batches: list, analyzer) -> tuple | None:
    """The broadcast of the operands' `...` dimensions; None when symbolic dims leave it open."""
    out, first = None, None
    for k, b in enumerate(batches):
        if not b.ndim:
            continue
        if out is None:
            out, first = b, k
            continue
        names = (f"the '...' of operand {first}", f"that of operand {k}")
        dims = broadcast_dims(call, out, b, analyzer, names=names)
        if dims is None:
            return None
        out = TensorStructInfo(dims, b.dtype)
    return () if out is None else tuple(out.shape_values)


def _legalize_einsum(bb, call):
    operands = call.args[0].fields
    return bb.call_te(topi.einsum, call.attrs["subscripts"], *operands, primfunc_name_hint="einsum")


def _infer_outer(call, bb):
    a, b = tensor_arg(call, 0, "x1"), tensor_arg(call, 1, "x2")
    dtype = binary_dtype(call, a, b)
    for sinfo, name in ((a, "x1"), (b, "x2")):
        if sinfo.ndim not in (-1, 1):
            raise TypeInferenceError(f"{op_label(call)} expects {name} to be 1-dimensional, got {sinfo}")
    if a.shape_values is None or b.shape_values is None:
        return TensorStructInfo(dtype=dtype, ndim=2)
    return TensorStructInfo((a.shape_values[0], b.shape_values[0]), dtype)


register_op("relax.einsum", 1, _infer_einsum, legalize=_legalize_einsum,
            pattern=OpPatternKind.kOutEWiseFusable,
            attrs={"subscripts": "numpy's einsum subscripts, e.g. 'bij,bjk->bik' or '...ij,...jk'"},
            description="Einstein summation over a tuple of operands.")
register_op("relax.outer", 2, _infer_outer, legalize=call_topi(topi.outer, "outer"),
            pattern=OpPatternKind.kOutEWiseFusable, attrs={},
            description="Outer product of two vectors: out[i, j] = x1[i] * x2[j].")


def einsum(operands, subscripts: str) -> Call:
    """The Einstein summation `subscripts` of `operands` (a tuple/list of tensors or a tuple value)."""
    if isinstance(operands, list | tuple):
        operands = Tuple(list(operands))
    return Call(Op.get("relax.einsum"), [operands], {"subscripts": str(subscripts)})


def outer(x1, x2) -> Call:
    """`x1[i] * x2[j]` for vectors `x1` and `x2`."""
    return Call(Op.get("relax.outer"), [x1, x2], {})
