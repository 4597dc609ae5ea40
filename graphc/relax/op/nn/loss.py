"""Losses and `batch_flatten` (`relax.op.nn`), with TVM's signatures.

- `nll_loss(predictions, targets, weights=None, reduction="mean", ignore_index=-100)`:
  predictions (N, C, d1, ...) or (C,), integer targets (N, d1, ...) or (), optional
  per-class weights (C,); a 0-d result unless `reduction="none"` (then the targets' shape).
- `cross_entropy_with_logits(predictions, labels)`: `-sum(predictions * labels)`, divided by
  the batch size when there is one; a 0-d result.
- `batch_flatten(data)`: (N, d1, d2, ...) -> (N, d1 * d2 * ...).

>>> from graphc import relax
>>> p = relax.Var("p", relax.TensorStructInfo((4, 3), "float32"))
>>> t = relax.Var("t", relax.TensorStructInfo((4,), "int64"))
>>> bb = relax.BlockBuilder()
>>> bb.normalize(nll_loss(p, t, reduction="none")).struct_info
R.Tensor((4,), dtype="float32")
>>> bb.normalize(batch_flatten(relax.Var("x", relax.TensorStructInfo((2, 3, 4), "float32")))).struct_info
R.Tensor((2, 12), dtype="float32")
"""

from __future__ import annotations

from .... import topi
from ....errors import TypeInferenceError
from ...expr import Call
from ...struct_info import TensorStructInfo
from ..infer import analyzer_of, op_label, provably_different, tensor_arg
from ..registry import Op, OpPatternKind, register_op
from ..te_legalize import call_topi

_REDUCTIONS = ("mean", "sum", "none")


def _infer_nll_loss(call, bb):
    pred = tensor_arg(call, 0, "predictions")
    target = tensor_arg(call, 1, "targets")
    if not pred.is_unknown_dtype and not pred.dtype.startswith(("float", "bfloat")):
        raise TypeInferenceError(f"{op_label(call)} requires predictions of a float dtype, got {pred}")
    if not target.is_unknown_dtype and not target.dtype.startswith(("int", "uint")):
        raise TypeInferenceError(f"{op_label(call)} requires integer targets, got {target}")
    reduction = call.attrs["reduction"]
    if reduction not in _REDUCTIONS:
        raise TypeInferenceError(f"{op_label(call)} expects reduction to be one of {_REDUCTIONS}, got "
                                 f"{reduction!r}")
    if -1 not in (pred.ndim, target.ndim) and target.ndim != max(pred.ndim - 1, 0):
        raise TypeInferenceError(f"{op_label(call)} expects targets of rank {max(pred.ndim - 1, 0)} for "
                                 f"predictions {pred}, got {target}")
    analyzer = analyzer_of(bb)
    if pred.shape_values is not None and target.shape_values is not None and pred.ndim >= 2:
        want = (pred.shape_values[0], *pred.shape_values[2:])
        if any(provably_different(a, b, analyzer) for a, b in zip(want, target.shape_values)):
            raise TypeInferenceError(f"{op_label(call)} expects targets shaped like predictions without the "
                                     f"class axis, got predictions {pred} and targets {target}")
    if len(call.args) == 3:
        weights = tensor_arg(call, 2, "weights")
        if weights.ndim not in (-1, 1):
            raise TypeInferenceError(f"{op_label(call)} expects 1-d weights (one per class), got {weights}")
    if reduction == "none":
        return TensorStructInfo(target.shape, pred.dtype, target.ndim)
    return TensorStructInfo((), pred.dtype)


def _legalize_nll_loss(bb, call):
    weights = call.args[2] if len(call.args) == 3 else None
    args = [call.args[0], call.args[1]] + ([weights] if weights is not None else [])

    def compute(pred, targets, *rest):
        return topi.nn.nll_loss(pred, targets, rest[0] if rest else None, call.attrs["reduction"],
                                call.attrs["ignore_index"])

    return bb.call_te(compute, *args, primfunc_name_hint="nll_loss")


register_op("relax.nn.nll_loss", -1, _infer_nll_loss, legalize=_legalize_nll_loss,
            pattern=OpPatternKind.kOpaque,
            attrs={"reduction": '"mean", "sum" or "none"',
                   "ignore_index": "the target value that counts for nothing"},
            float_only=True, description="Negative log likelihood loss.")


def nll_loss(predictions, targets, weights=None, reduction: str = "mean", ignore_index: int = -100) -> Call:
    """`-predictions[n, t, ...] * weights[t]` per target `t` (0 for `ignore_index`), reduced."""
    args = [predictions, targets] + ([weights] if weights is not None else [])
    attrs = {"reduction": str(reduction), "ignore_index": int(ignore_index)}
    return Call(Op.get("relax.nn.nll_loss"), args, attrs)


def _infer_cross_entropy(call, bb):
    pred = tensor_arg(call, 0, "predictions")
    labels = tensor_arg(call, 1, "labels")
    if not pred.is_unknown_dtype and not pred.dtype.startswith(("float", "bfloat")):
        raise TypeInferenceError(f"{op_label(call)} requires predictions of a float dtype, got {pred}")
    if not (pred.is_unknown_dtype or labels.is_unknown_dtype) and pred.dtype != labels.dtype:
        raise TypeInferenceError(f"{op_label(call)} expects labels of the predictions' dtype, got {pred} and "
                                 f"{labels}")
    if -1 not in (pred.ndim, labels.ndim) and pred.ndim != labels.ndim:
        raise TypeInferenceError(f"{op_label(call)} expects labels shaped like the predictions, got {pred} "
                                 "and "
                                 f"{labels}")
    return TensorStructInfo((), pred.dtype)


register_op("relax.nn.cross_entropy_with_logits", 2, _infer_cross_entropy,
            legalize=call_topi(topi.nn.cross_entropy_with_logits, "cross_entropy_with_logits"),
            pattern=OpPatternKind.kOpaque, float_only=True,
            description="-sum(predictions * labels), over the batch size when there is one.")


def cross_entropy_with_logits(predictions, labels) -> Call:
    """`-sum(predictions * labels) / N` (N the batch size, for 2-d and higher inputs)."""
    return Call(Op.get("relax.nn.cross_entropy_with_logits"), [predictions, labels])


def _infer_batch_flatten(call, bb):
    x = tensor_arg(call, 0, "data")
    if x.ndim == -1:
        return TensorStructInfo(None, x.dtype, 2)
    if x.ndim == 0:
        raise TypeInferenceError(f"{op_label(call)} expects data with a batch axis, got {x}")
    if x.shape_values is None:
        return TensorStructInfo(None, x.dtype, 2)
    inner = 1
    for d in x.shape_values[1:]:
        inner = inner * d
    inner = analyzer_of(bb).simplify(inner) if x.ndim > 1 else 1
    return TensorStructInfo((x.shape_values[0], inner), x.dtype)


register_op("relax.nn.batch_flatten", 1, _infer_batch_flatten,
            legalize=call_topi(topi.nn.batch_flatten, "batch_flatten"), pattern=OpPatternKind.kInjective,
            description="(N, d1, d2, ...) -> (N, d1 * d2 * ...).")


def batch_flatten(data) -> Call:
    """`data` as (batch, everything else)."""
    return Call(Op.get("relax.nn.batch_flatten"), [data])


__all__ = ["batch_flatten", "cross_entropy_with_logits", "nll_loss"]
