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
    if isinstance(value, relax_expr.Expr):
        return value
    if isinstance(value, bool | int | float):
        return relax_expr.const(value, like.dtype if like is not None else None)
    raise TypeError(f"nn.op expects nn.Tensor or a Python number, got {type(value).__name__}")


def _binary(fn, name):
    def apply(a, b, name: str = name) -> Tensor:
        like = a if isinstance(a, Tensor) else b if isinstance(b, Tensor) else None
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
sin = _unary(_op.sin, "sin")
cos = _unary(_op.cos, "cos")
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
    axes = list(range(-n, 0))  # TVM's form: the last n axes, counted from the end
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
                             groups=groups), "lv" if bias is not None else name)
    return _with_bias(out, bias, name, 4)


def _channel_bias(bias: Tensor, ndim: int = 4) -> Tensor:
    (channels,) = bias.shape
    return reshape(bias, [1, channels] + [1] * (ndim - 2))


def _with_bias(conv: Tensor, bias: Tensor | None, name: str, ndim: int) -> Tensor:
    if bias is None:
        return conv
    return add(conv, _channel_bias(bias, ndim), name=name)


def conv1d(x: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0, dilation=1,
           groups: int = 1, name: str = "conv1d") -> Tensor:
    """1-d convolution (NCW data, OIW weight); a bias of shape (O,) is added per channel."""
    out = emit(_op.nn.conv1d(_expr(x), _expr(weight), strides=stride, padding=padding, dilation=dilation,
                             groups=groups), "lv")
    return _with_bias(out, bias, name, 3)


def conv3d(x: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0, dilation=1,
           groups: int = 1, name: str = "conv3d") -> Tensor:
    """3-d convolution (NCDHW data, OIDHW weight); a bias of shape (O,) is added per channel."""
    out = emit(_op.nn.conv3d(_expr(x), _expr(weight), strides=stride, padding=padding, dilation=dilation,
                             groups=groups), "lv")
    return _with_bias(out, bias, name, 5)


def conv1d_transpose(x: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
                     output_padding=0, dilation=1, groups: int = 1, name: str = "conv1d_transpose") -> Tensor:
    """1-d transposed convolution (NCW data, IOW weight); a bias of shape (O,) is added per channel."""
    out = emit(_op.nn.conv1d_transpose(_expr(x), _expr(weight), strides=stride, padding=padding,
                                       output_padding=output_padding, dilation=dilation, groups=groups), "lv")
    return _with_bias(out, bias, name, 3)


def group_norm(x: Tensor, num_groups: int, weight: Tensor | None, bias: Tensor | None, eps: float = 1e-5,
               channel_axis: int = 1, axes=None, name: str = "group_norm") -> Tensor:
    """Group normalization (`axes` default: every axis after the channel axis)."""
    if axes is None:
        axes = list(range(channel_axis + 1, x.ndim))
    return emit(_op.nn.group_norm(_expr(x), _expr(weight), _expr(bias), num_groups, channel_axis, axes,
                                  epsilon=eps), name)


def rms_norm(x: Tensor, weight: Tensor, axes, epsilon: float = 1e-5, name: str = "rms_norm") -> Tensor:
    """Root-mean-square normalization over `axes`, times `weight`."""
    return emit(_op.nn.rms_norm(_expr(x), _expr(weight), axes=axes, epsilon=epsilon), name)


def expand_dims(x: Tensor, axis, name: str = "expand_dims") -> Tensor:
    return emit(_op.expand_dims(_expr(x), axis), name)


def arange(start, end=None, step=1, dtype: str = "float32", name: str = "arange") -> Tensor:
    return emit(_op.arange(start, end, step, dtype), name)


def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor, attn_mask: Tensor | None = None,
                                 is_causal: bool = False, scale: float | None = None,
                                 name: str = "scaled_dot_product_attention") -> Tensor:
    """`softmax(query @ key^T * scale + mask) @ value` on (batch, seq, heads, head_dim) tensors."""
    bias = None if attn_mask is None else _expr(attn_mask)
    return emit(_op.nn.attention(_expr(query), _expr(key), _expr(value), bias, scale,
                                 "TopLeft" if is_causal else None), name)


def get_timestep_embedding(x: Tensor, embedding_dim: int, flip_sin_to_cos: bool = False,
                           downscale_freq_shift: float = 1, scale: float = 1, max_period: int = 10000,
                           name: str = "get_timestep_embedding") -> Tensor:
    """Sinusoidal embeddings of timesteps `x` (1-d), as in diffusion models (TVM's definition)."""
    import math

    half = embedding_dim // 2
    t = expand_dims(astype(x, "float32", name="lv"), [1], name="lv")
    exponent = multiply(relax_expr.const(-math.log(max_period), "float32"), arange(0, half, 1, "float32"),
                        name="lv")
    exponent = divide(exponent, relax_expr.const(half - downscale_freq_shift, "float32"), name="lv")
    emb = multiply(t, expand_dims(exp(exponent, name="lv"), [0], name="lv"), name="lv")
    if scale != 1:
        emb = multiply(emb, relax_expr.const(scale, "float32"), name="lv")
    sin_emb, cos_emb = sin(emb, name="lv"), cos(emb, name="lv")
    emb = concat([cos_emb, sin_emb] if flip_sin_to_cos else [sin_emb, cos_emb], dim=-1, name="lv")
    if embedding_dim % 2:
        emb = emit(_op.nn.pad(_expr(emb), (0, 0, 0, 1)), "lv")
    return astype(emb, x.dtype, name=name)


__all__ = ["add", "arange", "astype", "concat", "conv1d", "conv1d_transpose", "conv2d", "conv3d", "cos",
           "divide", "exp", "expand_dims", "gelu", "get_timestep_embedding", "group_norm", "layer_norm",
           "matmul", "maximum", "minimum", "multiply", "negative", "permute_dims", "relu", "reshape",
           "rms_norm",
           "scaled_dot_product_attention", "sigmoid", "silu", "sin", "softmax", "sqrt", "subtract", "sum",
           "take", "tanh"]
