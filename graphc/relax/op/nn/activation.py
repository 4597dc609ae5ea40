"""Activations, softmax and dropout (`relax.op.nn`), each legalized to a `topi.nn` compute.

Results keep the argument's struct info; all but relu and leaky_relu need a float dtype.
dropout returns TVM's `(output, mask)` tuple; its legalization is the inference identity.

>>> from graphc import relax
>>> x = relax.Var("x", relax.TensorStructInfo((2, 3), "float32"))
>>> bb = relax.BlockBuilder()
>>> bb.normalize(relax.op.nn.softmax(x, axis=0)).struct_info
R.Tensor((2, 3), dtype="float32")
>>> bb.normalize(relax.op.nn.dropout(x, 0.5)).struct_info
R.Tuple(R.Tensor((2, 3), dtype="float32"), R.Tensor((2, 3), dtype="float32"))
"""

from __future__ import annotations

from .... import topi
from ....errors import TypeInferenceError
from ...expr import Call
from ...struct_info import TupleStructInfo
from ..infer import normalize_axis, op_label, tensor_arg
from ..registry import Op, OpPatternKind, register_op
from ..te_legalize import call_topi, register_topi_op


def _infer(require_float: bool):
    def infer(call, bb):
        x = tensor_arg(call, 0, "data")
        if require_float and not x.is_unknown_dtype and not x.dtype.startswith(("float", "bfloat")):
            raise TypeInferenceError(f"{op_label(call)} requires data to have a float dtype, got {x}")
        if "axis" in call.attrs and x.ndim != -1:
            normalize_axis(call, call.attrs["axis"], x.ndim, "axis")
        return x

    return infer


_ACTIVATIONS = {  # name: (attrs with descriptions, needs float)
    "relu": ({}, False),
    "leaky_relu": ({"alpha": "slope for x < 0"}, False),
    "gelu": ({}, True),
    "gelu_tanh": ({}, True),
    "silu": ({}, True),
    "softplus": ({"beta": "scale of x", "threshold": "linear above beta*x > threshold"}, True),
    "elu": ({"alpha": "scale of the negative part"}, True),
    "selu": ({}, True),
    "hardswish": ({}, True),
    "hardsigmoid": ({}, True),
    "softmax": ({"axis": "the axis normalized over"}, True),
    "log_softmax": ({"axis": "the axis normalized over"}, True),
}

for _name, (_attrs, _float) in _ACTIVATIONS.items():
    _pattern = OpPatternKind.kOpaque if "softmax" in _name else OpPatternKind.kElemWise
    register_topi_op(f"relax.nn.{_name}", 1, _infer(_float), getattr(topi.nn, _name), pattern=_pattern,
                     attrs=_attrs, description=f"The {_name} activation.", float_only=_float)


def _call(name: str, data, **attrs) -> Call:
    return Call(Op.get(f"relax.nn.{name}"), [data], attrs)


def relu(data) -> Call:
    """`max(data, 0)` elementwise."""
    return _call("relu", data)


def leaky_relu(data, alpha: float = 0.01) -> Call:
    """`data` where positive, else `alpha * data`."""
    return _call("leaky_relu", data, alpha=float(alpha))


def gelu(data) -> Call:
    """GELU with the exact normal CDF (erf)."""
    return _call("gelu", data)


def gelu_tanh(data) -> Call:
    """GELU with the tanh approximation."""
    return _call("gelu_tanh", data)


def silu(data) -> Call:
    """`data * sigmoid(data)`."""
    return _call("silu", data)


def softplus(data, beta: float = 1.0, threshold: float = 20.0) -> Call:
    """`log(1 + exp(beta * data)) / beta`, linear where `beta * data > threshold`."""
    return _call("softplus", data, beta=float(beta), threshold=float(threshold))


def elu(data, alpha: float = 1.0) -> Call:
    """`data` where positive, else `alpha * (exp(data) - 1)`."""
    return _call("elu", data, alpha=float(alpha))


def selu(data) -> Call:
    """Scaled ELU with SELU's constants."""
    return _call("selu", data)


def hardswish(data) -> Call:
    """`data * relu6(data + 3) / 6`."""
    return _call("hardswish", data)


def hardsigmoid(data) -> Call:
    """`relu6(data + 3) / 6`."""
    return _call("hardsigmoid", data)


def softmax(data, axis: int = -1) -> Call:
    """Softmax along `axis`."""
    return _call("softmax", data, axis=int(axis))


def log_softmax(data, axis: int = -1) -> Call:
    """Log-softmax along `axis`."""
    return _call("log_softmax", data, axis=int(axis))


def _infer_dropout(call, bb):
    x = tensor_arg(call, 0, "data")
    rate = call.attrs.get("rate", 0.5)
    if not 0.0 <= rate < 1.0:
        raise TypeInferenceError(f"{op_label(call)} expects rate in [0, 1), got {rate}")
    return TupleStructInfo([x, x])


def _dropout_inference(x):
    return [topi.identity(x), topi.full_like(x, 1)]


register_op(
    "relax.nn.dropout",
    1,
    _infer_dropout,
    legalize=call_topi(_dropout_inference, "dropout"),
    pattern=OpPatternKind.kElemWise,
    attrs={"rate": "probability of zeroing an element"},
    description="Dropout; (output, mask). Legalized for inference: output = data, mask = 1.",
)


def dropout(data, rate: float = 0.5) -> Call:
    """`(output, mask)`; at inference (as legalized) the output is `data` and the mask all ones."""
    return _call("dropout", data, rate=float(rate))


__all__ = [*_ACTIVATIONS, "dropout"]
