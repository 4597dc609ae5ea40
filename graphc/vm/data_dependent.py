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
