"""The work-list codes of the VM's shape builtins, shared by the compiler and the VM.

`vm.builtin.match_shape(value, heap, ndim, code, value, ..., err_ctx)` and
`vm.builtin.make_shape(heap, ndim, code, value, ...)` read their dimensions as (code, value)
pairs; `match_prim_value` and `make_prim_value` take one pair. `VMShapeLower` writes the
codes into the bytecode, the builtins and the decoder read them back: the numbers are part
of the executable format (TVM's runtime codes), so they never change.

>>> MatchShapeCode.STORE_TO_HEAP, int(MakeShapeCode.LOAD_SHAPE)
(<MatchShapeCode.STORE_TO_HEAP: 2>, 1)
"""

from __future__ import annotations

import enum


class MatchShapeCode(enum.IntEnum):
    """What `match_shape` does with one dimension (`value` is an immediate or a heap slot)."""

    NO_OP = 0  # nothing to check
    ASSERT_EQUAL_TO_IMM = 1  # the dimension must equal the immediate `value`
    STORE_TO_HEAP = 2  # first sight of a variable: heap[value] = dimension
    ASSERT_EQUAL_TO_LOAD = 3  # the dimension must equal heap[value], bound earlier


class MakeShapeCode(enum.IntEnum):
    """Where `make_shape` takes one dimension from."""

    USE_IMM = 0  # the immediate `value`
    LOAD_SHAPE = 1  # heap[value]


__all__ = ["MakeShapeCode", "MatchShapeCode"]
