"""Functional operators on `nn.Tensor` (`nn.op.add`, `nn.op.matmul`, ...).

Each emits one binding named after the operator into the function being exported; Python
numbers become constants of the other operand's dtype.
"""

from __future__ import annotations

from ... import expr as relax_expr
from ... import op as _op
from .core import Tensor, emit


def _expr(value, like: Tensor | None = None) -> relax_expr.Expr:
    if isinstance(value, Tensor):
        return value._expr
    if isinstance(value, bool | int | float):
        return relax_expr.const(value, like.dtype if like is not None else None)
    raise TypeError(f"nn.op expects nn.Tensor or a Python number, got {type(value).__name__}")


def _binary(fn, name):
    def apply(a, b, name: str = name) -> Tensor:
        like = a if isinstance(a, Tensor) else b
        return emit(fn(_expr(a, like), _expr(b, like)), name)

    apply.__name__ = name
    apply.__doc__ = f"Elementwise `{name}` with broadcasting."
    return apply


add = _binary(_op.add, "add")
subtract = _binary(_op.subtract, "subtract")
multiply = _binary(_op.multiply, "multiply")
divide = _binary(_op.divide, "divide")
maximum = _binary(_op.maximum, "maximum")
minimum = _binary(_op.minimum, "minimum")


def _unary(fn, name):
    def apply(x: Tensor, name: str = name) -> Tensor:
        return emit(fn(_expr(x)), name)

    apply.__name__ = name
    apply.__doc__ = f"Elementwise `{name}`."
    return apply


negative = _unary(_op.negative, "negative")
exp = _unary(_op.exp, "exp")
sqrt = _unary(_op.sqrt, "sqrt")
tanh = _unary(_op.tanh, "tanh")
sigmoid = _unary(_op.sigmoid, "sigmoid")
relu = _unary(_op.nn.relu, "relu")
silu = _unary(_op.nn.silu, "silu")
gelu = _unary(_op.nn.gelu, "gelu")


def matmul(a: Tensor, b: Tensor, out_dtype: str | None = None, name: str = "matmul") -> Tensor:
    """Matrix product with batch broadcasting (`out_dtype=None` keeps the inputs' dtype)."""
    return emit(_op.matmul(_expr(a), _expr(b), out_dtype="void" if out_dtype is None else out_dtype), name)


def permute_dims(x: Tensor, axes=None, name: str = "permute_dims") -> Tensor:
    return emit(_op.permute_dims(_expr(x), axes), name)


def reshape(x: Tensor, shape, name: str = "reshape") -> Tensor:
    return emit(_op.reshape(_expr(x), relax_expr.ShapeExpr(list(shape))), name)


def astype(x: Tensor, dtype: str, name: str = "astype") -> Tensor:
    return emit(_op.astype(_expr(x), dtype), name)


def softmax(x: Tensor, axis: int = -1, name: str = "softmax") -> Tensor:
    return emit(_op.nn.softmax(_expr(x), axis), name)


def layer_norm(x: Tensor, normalized_shape, weight: Tensor, bias: Tensor, eps: float = 1e-5,
               name: str = "layer_norm") -> Tensor:
    n = len(normalized_shape) if isinstance(normalized_shape, list | tuple) else 1
    axes = list(range(x.ndim - n, x.ndim))
    return emit(_op.nn.layer_norm(_expr(x), _expr(weight), _expr(bias), axes=axes, epsilon=eps), name)


def take(x: Tensor, indices: Tensor, axis: int = 0, name: str = "take") -> Tensor:
    return emit(_op.take(_expr(x), _expr(indices), axis=axis), name)


def concat(tensors, dim: int = 0, name: str = "concat") -> Tensor:
    return emit(_op.concat([_expr(t) for t in tensors], axis=dim), name)


def sum(x: Tensor, axis=None, keepdims: bool = False, name: str = "sum") -> Tensor:  # noqa: A001
    return emit(_op.sum(_expr(x), axis, keepdims), name)


def conv2d(x: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0, dilation=1,
           groups: int = 1, name: str = "conv2d") -> Tensor:
    """2-D convolution (NCHW data, OIHW weight); a bias of shape (O,) is added per channel."""
    out = emit(_op.nn.conv2d(_expr(x), _expr(weight), strides=stride, padding=padding, dilation=dilation,
                             groups=groups), name)
    if bias is None:
        return out
    return add(out, _channel_bias(bias))


def _channel_bias(bias: Tensor) -> Tensor:
    (channels,) = bias.shape
    return reshape(bias, [1, channels, 1, 1])
