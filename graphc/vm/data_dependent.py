"""VM builtins of the operators whose output shape depends on the input's values
(`relax.nonzero`, `relax.unique`): numpy computes the values, and the results are
allocated at their exact sizes when the model runs (graphc/relax/op/data_dependent.py).

>>> import numpy as np
>>> from graphc.runtime.tensor import Tensor
>>> nonzero(Tensor._from_host_array(np.array([[0, 2], [3, 0]], "float32"))).numpy()
array([[0, 1],
       [1, 0]])
"""

from __future__ import annotations

import numpy as np

from ..runtime.tensor import Tensor
from .builtins import as_vm_value, register_builtin


def _host(x) -> np.ndarray:
    return x.numpy() if isinstance(x, Tensor) else np.asarray(x)


@register_builtin("vm.builtin.nonzero", override=True)
def nonzero(x) -> Tensor:
    """numpy's nonzero, stacked: int64 (rank, count)."""
    a = _host(x)
    return as_vm_value(np.array(np.nonzero(a), dtype=np.int64).reshape(a.ndim, -1))


@register_builtin("vm.builtin.unique", override=True)
def unique(x, axis: int, flatten: int, sort: int) -> tuple:
    """(values, first indices, inverse indices, counts); unsorted: in order of first occurrence."""
    a = _host(x)
    if flatten:
        a, axis = a.reshape(-1), 0
    axis = int(axis)
    values, first, inverse, counts = np.unique(a, return_index=True, return_inverse=True,
                                               return_counts=True, axis=None if flatten else axis)
    inverse = inverse.reshape(-1)
    if not sort:
        order = np.argsort(first, kind="stable")  # unique entries by first occurrence
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)
        values = np.take(values, order, axis=axis)
        first, counts, inverse = first[order], counts[order], rank[inverse]
    as_i64 = [np.ascontiguousarray(v, dtype=np.int64) for v in (first, inverse, counts)]
    return as_vm_value((np.ascontiguousarray(values), *as_i64))


def _corners(boxes: np.ndarray, center_point_box: int) -> np.ndarray:
    """(x_min, y_min, x_max, y_max) per box, from corners in any order or a center and size."""
    if center_point_box:
        half = boxes[:, 2:4] / 2
        return np.concatenate([boxes[:, 0:2] - half, boxes[:, 0:2] + half], axis=1)
    y1, x1, y2, x2 = boxes.T
    return np.stack([np.minimum(x1, x2), np.minimum(y1, y2), np.maximum(x1, x2), np.maximum(y1, y2)], axis=1)


def _overlaps(corners: np.ndarray, k: int, others: np.ndarray, threshold: float) -> np.ndarray:
    """Whether box k's intersection over union with each of `others` exceeds `threshold`."""
    lo = np.maximum(corners[k, :2], corners[others, :2])
    hi = np.minimum(corners[k, 2:], corners[others, 2:])
    inter = np.prod(np.clip(hi - lo, 0, None), axis=1)
    area = np.prod(corners[:, 2:] - corners[:, :2], axis=1)
    union = area[k] + area[others] - inter
    with np.errstate(divide="ignore", invalid="ignore"):
        iou = np.where((inter > 0) & (area[k] > 0) & (area[others] > 0) & (union > 0), inter / union, 0)
    return iou > threshold


@register_builtin("vm.builtin.non_max_suppression", override=True)
def non_max_suppression(boxes, scores, max_per_class, iou_threshold, score_threshold,
                        center_point_box: int, has_score_threshold: int) -> Tensor:
    """ONNX's NonMaxSuppression: per batch and class, greedily keep the highest-scoring box
    (ties: the lower index) that no kept box overlaps by more than the IoU threshold, at most
    `max_per_class` of them; int64 (count, 3) rows of (batch, class, box)."""
    boxes, scores = _host(boxes), _host(scores)
    limit = int(_host(max_per_class).reshape(-1)[0]) if _host(max_per_class).size else 0
    iou = float(_host(iou_threshold).reshape(-1)[0]) if _host(iou_threshold).size else 0.0
    floor = float(_host(score_threshold).reshape(-1)[0]) if _host(score_threshold).size else 0.0
    if boxes.ndim != 3 or boxes.shape[2] != 4 or scores.ndim != 3 or scores.shape[0] != boxes.shape[0] \
            or scores.shape[2] != boxes.shape[1]:
        raise ValueError(f"NonMaxSuppression: boxes (batches, boxes, 4) and scores (batches, classes, boxes) "
                         f"expected, got {boxes.shape} and {scores.shape}")
    rows = []
    for b in range(boxes.shape[0]):
        corners = _corners(boxes[b].astype(np.float64), center_point_box)
        for c in range(scores.shape[1]):
            s = scores[b, c]
            order = np.lexsort((np.arange(s.size), -s))  # score descending, then index
            if has_score_threshold:
                order = order[s[order] > floor]
            kept: list[int] = []
            for k in order:
                if len(kept) >= limit:
                    break
                if not kept or not _overlaps(corners, int(k), np.array(kept), iou).any():
                    kept.append(int(k))
            rows.extend((b, c, k) for k in kept)
    return as_vm_value(np.array(rows, dtype=np.int64).reshape(-1, 3))
