"""Layers: Linear, ReLU, GELU, SiLU, Conv2D, LayerNorm, Embedding (TVM's names and forwards)."""

from __future__ import annotations

from . import op
from .core import Module, Parameter, Tensor


class Linear(Module):
    """y = x @ weight.T + bias, weight of shape (out_features, in_features)."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True, dtype: str = "float32",
                 out_dtype: str | None = None):
        self.in_features = in_features
        self.out_features = out_features
        self.out_dtype = out_dtype
        self.weight = Parameter((out_features, in_features), dtype)
        self.bias = Parameter((out_features,), dtype) if bias else None

    def forward(self, x: Tensor) -> Tensor:
        w = op.permute_dims(self.weight)
        x = op.matmul(x, w, out_dtype=self.out_dtype)
        return op.add(x, self.bias) if self.bias is not None else x


class ReLU(Module):
    def forward(self, x: Tensor) -> Tensor:
        return op.relu(x)


class GELU(Module):
    def forward(self, x: Tensor) -> Tensor:
        return op.gelu(x)


class SiLU(Module):
    def forward(self, x: Tensor) -> Tensor:
        return op.silu(x)


class Conv2D(Module):
    """2-D convolution over NCHW input; weight (out_channels, in_channels/groups, kh, kw)."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0, dilation=1,
                 groups: int = 1, bias: bool = True, dtype: str = "float32"):
        kh, kw = (kernel_size, kernel_size) if isinstance(kernel_size, int) else kernel_size
        if in_channels % groups or out_channels % groups:
            raise ValueError(f"Conv2D: groups={groups} must divide in_channels={in_channels} "
                             f"and out_channels={out_channels}")
        self.stride, self.padding, self.dilation, self.groups = stride, padding, dilation, groups
        self.weight = Parameter((out_channels, in_channels // groups, kh, kw), dtype)
        self.bias = Parameter((out_channels,), dtype) if bias else None

    def forward(self, x: Tensor) -> Tensor:
        return op.conv2d(x, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)


class LayerNorm(Module):
    """Normalizes the last dimension(s) `normalized_shape`, with a learned scale and shift."""

    def __init__(self, normalized_shape, eps: float = 1e-5, elementwise_affine: bool = True,
                 dtype: str = "float32"):
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.normalized_shape = shape
        self.eps = eps
        if not elementwise_affine:
            raise NotImplementedError("LayerNorm without elementwise_affine is not supported yet")
        self.weight = Parameter(shape, dtype)
        self.bias = Parameter(shape, dtype)

    def forward(self, x: Tensor) -> Tensor:
        return op.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)


class Embedding(Module):
    """Rows of a (num, dim) table picked by integer indices."""

    def __init__(self, num: int, dim: int, dtype: str = "float32"):
        self.num, self.dim = num, dim
        self.weight = Parameter((num, dim), dtype)

    def forward(self, x: Tensor) -> Tensor:
        return op.take(self.weight, x, axis=0)
