"""Shared IR infrastructure: modules, data types, structural comparison, the pass infrastructure."""

from . import transform
from .dtype import DataType
from .module import DummyGlobalInfo, GlobalVar, IRModule
from .node import Node
from .structural import assert_structural_equal, structural_equal, structural_hash

__all__ = [
    "DataType",
    "DummyGlobalInfo",
    "GlobalVar",
    "IRModule",
    "Node",
    "assert_structural_equal",
    "structural_equal",
    "structural_hash",
    "transform",
]
