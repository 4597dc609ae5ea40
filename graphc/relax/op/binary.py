"""Elementwise binary operators with numpy broadcasting: arithmetic, comparison, logic, bits.

Shapes broadcast right-aligned; symbolic dimensions are compared with the arithmetic
analyzer (a pair that cannot be decided keeps only the rank, as TVM does). As in TVM both
operands must have the same dtype; comparisons return bool; logical ops take bools and
bitwise ops integers. Each legalizes to the `topi` compute of the same name. On two `R.Prim`
values the arithmetic, comparison and logical operators give an `R.Prim` (as in TVM), legalized
to `R.prim_value(a + b)`.

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
from ...tir import expr as _e
from ...tir import op as _op
from ..expr import Call, Constant, PrimValue
from ..struct_info import PrimStructInfo
from .infer import analyzer_of, binary_dtype, broadcast_sinfo, op_label, tensor_arg
from .registry import Op, OpPatternKind, register_op
from .te_legalize import call_topi

_ARITH = ("add", "subtract", "multiply", "divide", "floor_divide", "power", "maximum", "minimum",
          "mod", "floor_mod")
_COMPARE = ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal")
_LOGICAL = ("logical_and", "logical_or", "logical_xor")
_BITWISE = ("bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift")


# The scalar function of each operator, for R.Prim operands (TVM computes those as PrimValues).
_PRIM_FUNCS = {
    "add": lambda a, b: a + b, "subtract": lambda a, b: a - b, "multiply": lambda a, b: a * b,
    "divide": lambda a, b: a / b, "floor_divide": _e.floordiv, "floor_mod": _e.floormod, "mod": _e.truncmod,
    "maximum": _op.max, "minimum": _op.min, "power": _op.pow,
    "equal": lambda a, b: _e._compare(_e.EQ, a, b), "not_equal": lambda a, b: _e._compare(_e.NE, a, b),
    "less": lambda a, b: _e._compare(_e.LT, a, b), "less_equal": lambda a, b: _e._compare(_e.LE, a, b),
    "greater": lambda a, b: _e._compare(_e.GT, a, b), "greater_equal": lambda a, b: _e._compare(_e.GE, a, b),
    "logical_and": _e.logical_and, "logical_or": _e.logical_or,
    "bitwise_and": _op.bitwise_and, "bitwise_or": _op.bitwise_or, "bitwise_xor": _op.bitwise_xor,
}


def _infer_prim(call, kind: str, a: PrimStructInfo, b: PrimStructInfo):
    """`R.add(p, q)` on R.Prim values: an R.Prim, whose value is known when both operands' are."""
    name = call.op.name.removeprefix("relax.")
    fn = _PRIM_FUNCS.get(name)
    if fn is None:
        raise TypeInferenceError(f"{op_label(call)} takes tensors, not R.Prim values; got x1 {a} and x2 {b}")
    if a.dtype != b.dtype and "void" not in (a.dtype, b.dtype):
        raise TypeInferenceError(f"{op_label(call)} expects equal dtypes, got x1 {a} and x2 {b}")
    if a.value is not None and b.value is not None:
        return PrimStructInfo(value=fn(a.value, b.value))
    return PrimStructInfo("bool" if kind == "compare" else a.dtype)


def _legalize_prim(bb, call):
    """R.Prim operands: the result is `R.prim_value(f(a, b))`; an operand of unknown value is first
    bound to a fresh symbolic variable by a match_cast."""
    values = []
    for i, arg in enumerate(call.args):
        sinfo = arg.struct_info
        if sinfo.value is None:
            var = _e.Var(f"v{i}", sinfo.dtype)
            arg = bb.match_cast(arg, PrimStructInfo(value=var))
            sinfo = arg.struct_info
        values.append(sinfo.value)
    return PrimValue(_PRIM_FUNCS[call.op.name.removeprefix("relax.")](*values))


def _whole_power(call) -> float | None:
    """The exponent of `R.power(x, c)` when `c` is a 0-d float constant with a whole value in
    1..4 (GPT-2's `x ** 3`): it goes into the compute as a literal, so the code generator turns
    the power into multiplications instead of a libm call per element."""
    exponent = call.args[1]
    if not isinstance(exponent, Constant) or len(exponent.data.shape) != 0:
        return None
    dtype = str(exponent.data.dtype)
    if not dtype.startswith("float") or dtype != getattr(call.args[0].struct_info, "dtype", None):
        return None
    value = float(exponent.data.numpy())
    return value if value.is_integer() and 1 <= value <= 4 else None


def _legalize(name: str):
    tensor = call_topi(getattr(topi, name), name)

    def legalize(bb, call):
        if all(isinstance(a.struct_info, PrimStructInfo) for a in call.args):
            return _legalize_prim(bb, call)
        if name == "power" and (value := _whole_power(call)) is not None:
            dtype = str(call.args[1].data.dtype)
            return bb.call_te(lambda x: topi.power(x, _e.const(value, dtype)), call.args[0],
                              primfunc_name_hint=name)
        return tensor(bb, call)

    legalize.__name__ = f"legalize_{name}"
    return legalize


def _infer(kind: str):
    def infer(call, bb):
        sa, sb = call.args[0].struct_info, call.args[1].struct_info
        if isinstance(sa, PrimStructInfo) and isinstance(sb, PrimStructInfo):
            return _infer_prim(call, kind, sa, sb)
        a, b = tensor_arg(call, 0, "x1"), tensor_arg(call, 1, "x2")
        dtype = binary_dtype(call, a, b)
        if kind == "float" and dtype != "void" and not dtype.startswith(("float", "bfloat")):
            raise TypeInferenceError(f"{op_label(call)} requires operands of a float dtype, got x1 {a}")
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
        register_op(f"relax.{name}", 2, _infer(kind), legalize=_legalize(name),
                    pattern=OpPatternKind.kBroadcast, description=f"Elementwise {name} with broadcasting.",
                    float_only=kind == "float")


_FLOAT = ("atan2", "hypot", "copysign")  # graphc's, beyond TVM's: float-only elementwise functions
_register(_ARITH, "arith")
_register(_FLOAT, "float")
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

atan2, hypot, copysign = (_make(n) for n in _FLOAT)

__all__ = [*_ARITH, *_COMPARE, *_LOGICAL, *_BITWISE, *_FLOAT]
