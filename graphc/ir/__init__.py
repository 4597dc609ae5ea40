"""Shared IR infrastructure: modules, data types, structural comparison."""

from .dtype import DataType
from .module import GlobalVar, IRModule
from .node import Node
from .structural import assert_structural_equal, structural_equal, structural_hash
from . import transform  # noqa: E402  (after module: transform imports it)

__all__ = [
    "DataType",
    "GlobalVar",
    "IRModule",
    "Node",
    "assert_structural_equal",
    "structural_equal",
    "structural_hash",
    "transform",
]
