"""Shared IR infrastructure: modules, data types, structural comparison, the pass infrastructure."""

from . import transform
from .dtype import DataType
from .module import DummyGlobalInfo, GlobalVar, IRModule
from .node import Node
from .op_attr import get_op_attr, register_intrin_lowering, register_op_attr
from .structural import assert_structural_equal, structural_equal, structural_hash

__all__ = [
    "DataType",
    "DummyGlobalInfo",
    "GlobalVar",
    "IRModule",
    "Node",
    "assert_structural_equal",
    "get_op_attr",
    "register_intrin_lowering",
    "register_op_attr",
    "structural_equal",
    "structural_hash",
    "transform",
]
