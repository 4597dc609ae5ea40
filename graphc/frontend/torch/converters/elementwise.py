"""Elementwise ATen operators: unary math, binary arithmetic and comparisons with PyTorch's
type promotion, activations, `where`, `masked_fill`, `clamp`."""

from __future__ import annotations

import operator

from .... import relax
from ....errors import FrontendError
from .common import cast, dtype_of, is_float, operand, result_dtype
from .registry import converter

op = relax.op

_UNARY = {  # ATen name: Relax operator (its builder is relax.op.<name>)
    "abs": "abs",
    "neg": "negative",
    "exp": "exp",
    "log": "log",
    "sqrt": "sqrt",
    "rsqrt": "rsqrt",
    "sin": "sin",
    "cos": "cos",
    "tan": "tan",
    "tanh": "tanh",
    "sigmoid": "sigmoid",
    "erf": "erf",
    "floor": "floor",
    "ceil": "ceil",
    "round": "round",
    "sign": "sign",
    "square": "square",
    "isnan": "isnan",
    "isinf": "isinf",
    "isfinite": "isfinite",
    "bitwise_not": "bitwise_not",
    "relu": "nn.relu",
    "silu": "nn.silu",
    "selu": "nn.selu",
    "hardswish": "nn.hardswish",
    "hardsigmoid": "nn.hardsigmoid",
}


def _unary(name: str):
    build = operator.attrgetter(name)(op)
    # PyTorch computes a float-only operator on integers in the default float type
    float_only = op.Op.get(f"relax.{name}").info.float_only

    def convert(importer, args):
        x = args["self"]
        if float_only:
            x = cast(x, args.out_dtype)
        return build(x)

    return convert


for _aten, _name in _UNARY.items():
    converter(f"aten.{_aten}.default", f"aten.{_aten}_.default")(_unary(_name))


_ARITH = {
    "add": op.add,
    "sub": op.subtract,
    "mul": op.multiply,
    "maximum": op.maximum,
    "minimum": op.minimum,
    "floor_divide": op.floor_divide,
    "remainder": op.floor_mod,
    "fmod": op.mod,
    "pow": op.power,
    "bitwise_and": op.bitwise_and,
    "bitwise_or": op.bitwise_or,
    "bitwise_xor": op.bitwise_xor,
    "logical_and": op.logical_and,
    "logical_or": op.logical_or,
    "logical_xor": op.logical_xor,
}
_COMPARE = {
    "eq": op.equal,
    "ne": op.not_equal,
    "lt": op.less,
    "le": op.less_equal,
    "gt": op.greater,
    "ge": op.greater_equal,
}


def _operands(args, first: str, second: str):
    """Both operands in their promoted dtype (PyTorch's result_type)."""
    dtype = result_dtype(args.fake(first), args.fake(second))
    return operand(args[first], dtype), operand(args[second], dtype), dtype


def _binary(fn, bool_result: bool = False):
    def convert(importer, args):
        second = "other" if "other" in args.values else "exponent"
        first = "self" if "self" in args.values else "input"
        a, b, dtype = _operands(args, first, second)
        if "alpha" in args.values:
            alpha = args["alpha"]
            if alpha != 1:
                b = op.multiply(b, operand(alpha, b.struct_info.dtype))
        if fn in (op.maximum, op.minimum) and is_float(dtype):
            return _nan_propagating(importer, fn, a, b)
        out = importer.bb.normalize(fn(a, b))
        return out if bool_result else cast(out, args.out_dtype)

    return convert


def _nan_propagating(importer, fn, a, b):
    """torch.maximum/minimum return NaN when either side is NaN (a + b is then NaN too)."""
    a, b = importer.emit(a), importer.emit(b)
    nan = importer.emit(op.logical_or(op.isnan(a), op.isnan(b)))
    return op.where(nan, importer.emit(op.add(a, b)), importer.emit(fn(a, b)))


def _logical(fn):
    def convert(importer, args):
        return fn(_as_bool(args["self"]), _as_bool(args["other"]))

    return convert


def _as_bool(x):
    """Truthiness of a tensor: nonzero elements are True."""
    if dtype_of(x) == "bool":
        return x
    return op.not_equal(x, relax.const(0, dtype_of(x)))


for _name, _fn in _ARITH.items():
    if _name.startswith("logical"):
        converter(f"aten.{_name}", f"aten.{_name}_")(_logical(_fn))
    else:
        converter(f"aten.{_name}", f"aten.{_name}_")(_binary(_fn))
for _name, _fn in _COMPARE.items():
    converter(f"aten.{_name}")(_binary(_fn, bool_result=True))


@converter("aten.rsub.Scalar", "aten.rsub.Tensor")
def _rsub(importer, args):
    a, b, _ = _operands(args, "self", "other")
    alpha = args["alpha"]
    if alpha != 1:
        a = op.multiply(a, operand(alpha, a.struct_info.dtype))
    return op.subtract(b, a)


@converter(
    "aten.div.Tensor",
    "aten.div.Scalar",
    "aten.div.Tensor_mode",
    "aten.div.Scalar_mode",
    "aten.div_.Tensor",
    "aten.true_divide.Tensor",
)
def _div(importer, args):
    mode = args.get("rounding_mode")
    dtype = args.out_dtype
    if mode is None:
        return op.divide(operand(args["self"], dtype), operand(args["other"], dtype))
    a, b, compute = _operands(args, "self", "other")
    if mode == "floor":
        return op.floor_divide(a, b)
    if mode == "trunc":
        if compute.startswith(("int", "uint")):
            # C division truncates toward zero: the sign-corrected floor division
            q = op.floor_divide(op.abs(a), op.abs(b))
            negative = op.not_equal(op.less(a, relax.const(0, compute)), op.less(b, relax.const(0, compute)))
            return op.where(negative, op.negative(q), q)
        quotient = op.divide(a, b)
        return op.where(op.less(quotient, relax.const(0, compute)), op.ceil(quotient), op.floor(quotient))
    raise args.unsupported("rounding_mode", "must be None, 'floor' or 'trunc'")


@converter("aten.reciprocal.default")
def _reciprocal(importer, args):
    x = cast(args["self"], args.out_dtype)
    return op.divide(relax.const(1, args.out_dtype), x)


@converter("aten.where.self", "aten.where.ScalarSelf", "aten.where.ScalarOther", "aten.where.Scalar")
def _where(importer, args):
    dtype = args.out_dtype
    condition = cast(args["condition"], "bool")
    return op.where(condition, operand(args["self"], dtype), operand(args["other"], dtype))


@converter("aten.masked_fill.Scalar", "aten.masked_fill.Tensor", "aten.masked_fill_.Scalar")
def _masked_fill(importer, args):
    x = args["self"]
    value = operand(args["value"], x.struct_info.dtype)
    return op.where(cast(args["mask"], "bool"), value, x)


@converter(
    "aten.clamp.default",
    "aten.clamp.Tensor",
    "aten.clip.default",
    "aten.clamp_.default",
    "aten.hardtanh.default",
    "aten.relu6.default",
    "aten.clamp_min.default",
    "aten.clamp_max.default",
)
def _clamp(importer, args):
    x = args["self"]
    dtype = args.out_dtype
    x = cast(x, dtype)
    name = args.op
    if name.startswith("aten.hardtanh"):
        lo, hi = args["min_val"], args["max_val"]
    elif name.startswith("aten.relu6"):
        lo, hi = 0.0, 6.0
    elif name.startswith("aten.clamp_min"):
        lo, hi = args["min"], None
    elif name.startswith("aten.clamp_max"):
        lo, hi = None, args["max"]
    else:
        lo, hi = args.get("min"), args.get("max")
    x = importer.emit(x) if is_float(dtype) else x
    out = x
    if lo is not None:
        out = op.maximum(out, operand(lo, dtype))
    if hi is not None:
        out = op.minimum(out, operand(hi, dtype))
    if not is_float(dtype):
        return out
    return op.where(op.isnan(x), x, importer.emit(out))  # NaN stays NaN, as in PyTorch


@converter("aten.gelu.default")
def _gelu(importer, args):
    approximate = args["approximate"]
    if approximate == "none":
        return op.nn.gelu(args["self"])
    if approximate == "tanh":
        return op.nn.gelu_tanh(args["self"])
    raise args.unsupported("approximate", "must be 'none' or 'tanh'")


@converter("aten.leaky_relu.default", "aten.leaky_relu_.default")
def _leaky_relu(importer, args):
    return op.nn.leaky_relu(args["self"], float(args["negative_slope"]))


@converter("aten.elu.default")
def _elu(importer, args):
    if args["scale"] != 1 or args["input_scale"] != 1:
        raise FrontendError(f"{args.op}: scale and input_scale other than 1 are not supported")
    return op.nn.elu(args["self"], float(args["alpha"]))


@converter("aten.softplus.default")
def _softplus(importer, args):
    return op.nn.softplus(args["self"], float(args["beta"]), float(args["threshold"]))


@converter("aten.logical_not.default", "aten.logical_not_.default")
def _logical_not(importer, args):
    return op.logical_not(_as_bool(args["self"]))


@converter("aten.rrelu_with_noise_functional.default", "aten.rrelu.default")
def _rrelu(importer, args):
    """Randomized leaky ReLU in eval mode: the fixed slope (lower + upper) / 2."""
    if args["training"]:
        raise args.unsupported("training", "must be False (random slopes are training-only)")
    args.ignore("generator")
    slope = (float(args["lower"]) + float(args["upper"])) / 2
    out = op.nn.leaky_relu(args["self"], slope)
    if "noise" not in args.values:
        return out
    return relax.Tuple([importer.emit(out), args["noise"]])  # eval mode leaves the noise as it is
