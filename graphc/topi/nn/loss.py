"""Losses as TE computes: nll_loss and cross_entropy_with_logits (TVM's definitions).

>>> from graphc import te, topi
>>> p = te.placeholder((4, 3), "float32", name="p")
>>> t = te.placeholder((4,), "int64", name="t")
>>> topi.nn.nll_loss(p, t, None, "mean", -100).shape
()
"""

from __future__ import annotations

from ... import te
from ...tir import expr as _e
from ..reduce import sum as _sum


def _class_index(predictions: te.Tensor, target, index: tuple) -> tuple:
    """The index of `predictions` for class `target` at target position `index` (class axis 1,
    or 0 without a batch axis)."""
    if len(predictions.shape) == 1:
        return (target,)
    return (index[0], target, *index[1:])


def nll_loss(predictions: te.Tensor, targets: te.Tensor, weights: te.Tensor | None, reduction: str = "mean",
             ignore_index: int = -100) -> te.Tensor:
    """Negative log likelihood: `-predictions[n, t, ...] * weights[t]` at each target position
    (0 where `t == ignore_index`), reduced by "mean" (over the weights of the counted targets),
    "sum" or "none"."""
    dtype = predictions.dtype

    def target_at(index):
        return _e.cast(targets(*index), "int64")

    def weight_of(t):
        return weights(t) if weights is not None else _e.const(1.0, dtype)

    def counted(t):
        return _e.NE(t, _e.const(ignore_index, "int64"))

    def safe(t):  # an ignored target's class is never read: 0 stands in for it
        return _e.select(counted(t), t, _e.const(0, "int64"))

    def loss_at(*index):
        t = target_at(index)
        value = -predictions(*_class_index(predictions, safe(t), index)) * weight_of(safe(t))
        return _e.select(counted(t), value, _e.const(0.0, dtype))

    loss = te.compute(targets.shape, loss_at, name="nll_loss")
    if reduction == "none":
        return loss
    total = _sum(loss, axis=None)
    if reduction == "sum":
        return total
    def weight_at(*index):
        t = target_at(index)
        return _e.select(counted(t), weight_of(safe(t)), _e.const(0.0, dtype))

    weight = te.compute(targets.shape, weight_at, name="nll_loss_weight")
    return te.compute((), lambda: total() / _sum(weight, axis=None)(), name="T_divide")


def cross_entropy_with_logits(predictions: te.Tensor, labels: te.Tensor) -> te.Tensor:
    """`-sum(predictions * labels)`, divided by the batch size (the first dimension) when the
    inputs have two or more dimensions."""
    product = te.compute(predictions.shape, lambda *i: predictions(*i) * labels(*i), name="T_multiply")
    total = _sum(product, axis=None)
    if len(predictions.shape) > 1:
        batch = _e.cast(predictions.shape[0], predictions.dtype)
        return te.compute((), lambda: -total() / batch, name="T_divide")
    return te.compute((), lambda: -total(), name="T_negative")


__all__ = ["cross_entropy_with_logits", "nll_loss"]
