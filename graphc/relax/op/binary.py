"""Elementwise binary operators with numpy broadcasting: arithmetic, comparison, logic, bits.

Shapes broadcast right-aligned; symbolic dimensions are compared with the arithmetic
analyzer (a pair that cannot be decided keeps only the rank, as TVM does). As in TVM both
operands must have the same dtype; comparisons return bool; logical ops take bools and
bitwise ops integers. Each legalizes to the `topi` compute of the same name.

>>> from graphc import relax, tir
>>> n = tir.Var("n", "int64")
>>> x = relax.Var("x", relax.TensorStructInfo((n, 1), "float32"))
>>> y = relax.Var("y", relax.TensorStructInfo((4,), "float32"))
>>> bb = relax.BlockBuilder()
>>> bb.normalize(relax.op.multiply(x, y)).struct_info
R.Tensor((n, 4), dtype="float32")
>>> bb.normalize(relax.op.less(x, y)).struct_info
R.Tensor((n, 4), dtype="bool")
>>> bb.normalize(relax.op.bitwise_and(x, y))
Traceback (most recent call last):
  ...
graphc.errors.TypeInferenceError: 'bitwise_and' requires integer operands, got x1 R.Tensor(...)
"""

from __future__ import annotations

from ... import topi
from ...errors import TypeInferenceError
from ..expr import Call
from .infer import analyzer_of, binary_dtype, broadcast_sinfo, op_label, tensor_arg
from .registry import Op, OpPatternKind, register_op
from .te_legalize import call_topi

_ARITH = ("add", "subtract", "multiply", "divide", "floor_divide", "power", "maximum", "minimum",
          "mod", "floor_mod")
_COMPARE = ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal")
_LOGICAL = ("logical_and", "logical_or", "logical_xor")
_BITWISE = ("bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift")


def _infer(kind: str):
    def infer(call, bb):
        a, b = tensor_arg(call, 0, "x1"), tensor_arg(call, 1, "x2")
        dtype = binary_dtype(call, a, b)
        if kind == "logical" and dtype not in ("bool", "void"):
            raise TypeInferenceError(f"{op_label(call)} requires bool operands, got x1 {a}; compare first")
        if kind == "bitwise" and dtype != "void" and not dtype.startswith(("int", "uint", "bool")):
            raise TypeInferenceError(f"{op_label(call)} requires integer operands, got x1 {a}")
        if kind == "compare":
            dtype = "bool"
        return broadcast_sinfo(call, a, b, dtype, analyzer_of(bb))

    return infer


def _register(names, kind: str) -> None:
    for name in names:
        register_op(f"relax.{name}", 2, _infer(kind), legalize=call_topi(getattr(topi, name), name),
                    pattern=OpPatternKind.kBroadcast, description=f"Elementwise {name} with broadcasting.")


_register(_ARITH, "arith")
_register(_COMPARE, "compare")
_register(_LOGICAL, "logical")
_register(_BITWISE, "bitwise")


def _make(name: str):
    op_name = f"relax.{name}"

    def build(x1, x2) -> Call:
        return Call(Op.get(op_name), [x1, x2])

    build.__name__ = build.__qualname__ = name
    build.__doc__ = f"Elementwise `{name}(x1, x2)`, broadcasting."
    return build


add, subtract, multiply, divide = (_make(n) for n in ("add", "subtract", "multiply", "divide"))
floor_divide, power, maximum, minimum = (_make(n) for n in ("floor_divide", "power", "maximum", "minimum"))
mod, floor_mod = _make("mod"), _make("floor_mod")
equal, not_equal, less, less_equal, greater, greater_equal = (_make(n) for n in _COMPARE)
logical_and, logical_or, logical_xor = (_make(n) for n in _LOGICAL)
bitwise_and, bitwise_or, bitwise_xor, left_shift, right_shift = (_make(n) for n in _BITWISE)

__all__ = [*_ARITH, *_COMPARE, *_LOGICAL, *_BITWISE]
