"""ATen operator converters, one module per family; importing them fills `CONVERTERS`."""

from . import (  # noqa: F401  (registration)
    advanced_indexing,
    create,
    elementwise,
    gather_sort_scan,
    linalg,
    math,
    nn,
    reduce,
    shape,
    spatial,
)
from .registry import CONVERTERS, Args, converter, lookup, op_key

__all__ = ["CONVERTERS", "Args", "converter", "lookup", "op_key"]
