"""TVM's `tvm.ir.base` module path: the node base class and structural comparison.

TVM code imports `from tvm.ir.base import assert_structural_equal`; the same names live in
`graphc.ir` and are re-exported here so that import ports by renaming.
"""

from .node import Node
from .structural import assert_structural_equal, structural_equal, structural_hash

__all__ = ["Node", "assert_structural_equal", "structural_equal", "structural_hash"]
