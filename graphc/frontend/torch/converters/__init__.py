"""ATen operator converters, one module per family; importing them fills `CONVERTERS`."""

from . import create, elementwise, index, nn, reduce, shape, spatial  # noqa: F401  (registration)
from .registry import CONVERTERS, Args, converter, lookup, op_key

__all__ = ["CONVERTERS", "Args", "converter", "lookup", "op_key"]
