"""Layers with TVM's names, parameters and forwards: Linear, ReLU, GELU, SiLU, Identity,
Conv1D/2D/3D, ConvTranspose1D, LayerNorm, GroupNorm, RMSNorm, Embedding, ModuleList, ModuleDict,
Attention, Timesteps, TimestepEmbedding."""

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


class Identity(Module):
    def forward(self, x: Tensor) -> Tensor:
        return x


def _kernel(kernel_size, nd: int) -> tuple:
    return (kernel_size,) * nd if isinstance(kernel_size, int) else tuple(kernel_size)


def _divides(name: str, groups: int, *channels) -> None:
    if any(isinstance(c, int) and c % groups for c in channels):
        raise ValueError(f"{name}: groups={groups} must divide the channels {channels}")


def _by_groups(channels, groups: int):
    return channels // groups if groups != 1 else channels


class _Conv(Module):
    """N-d convolution over channels-first input; weight (out_channels, in_channels/groups, *kernel)."""

    nd = 2
    transpose = False

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups: int = 1, bias: bool = True, dtype: str = "float32", output_padding=0):
        _divides(type(self).__name__, groups, in_channels, out_channels)
        self.stride, self.padding, self.dilation, self.groups = stride, padding, dilation, groups
        self.output_padding = output_padding
        kernel = _kernel(kernel_size, self.nd)
        if self.transpose:
            self.weight = Parameter((in_channels, _by_groups(out_channels, groups), *kernel), dtype)
        else:
            self.weight = Parameter((out_channels, _by_groups(in_channels, groups), *kernel), dtype)
        self.bias = Parameter((out_channels,), dtype) if bias else None


class Conv1D(_Conv):
    """1-D convolution over NCW input; weight (out_channels, in_channels/groups, k)."""

    nd = 1

    def forward(self, x: Tensor) -> Tensor:
        return op.conv1d(x, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)


class Conv2D(_Conv):
    """2-D convolution over NCHW input; weight (out_channels, in_channels/groups, kh, kw)."""

    def forward(self, x: Tensor) -> Tensor:
        return op.conv2d(x, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)


class Conv3D(_Conv):
    """3-D convolution over NCDHW input; weight (out_channels, in_channels/groups, kd, kh, kw)."""

    nd = 3

    def forward(self, x: Tensor) -> Tensor:
        return op.conv3d(x, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)


class ConvTranspose1D(_Conv):
    """1-D transposed convolution over NCW input; weight (in_channels, out_channels/groups, k)."""

    nd = 1
    transpose = True

    def forward(self, x: Tensor) -> Tensor:
        return op.conv1d_transpose(x, self.weight, self.bias, self.stride, self.padding, self.output_padding,
                                   self.dilation, self.groups)


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


class GroupNorm(Module):
    """Normalizes groups of channels (channel axis 1 by default), with a learned scale and shift."""

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5, affine: bool = True,
                 dtype: str = "float32"):
        self.num_groups, self.num_channels, self.eps = num_groups, num_channels, eps
        self.weight = Parameter((num_channels,), dtype) if affine else None
        self.bias = Parameter((num_channels,), dtype) if affine else None

    def forward(self, x: Tensor, channel_axis: int = 1, axes=None) -> Tensor:
        if self.weight is None:
            raise NotImplementedError("GroupNorm without affine parameters is not supported yet")
        return op.group_norm(x, self.num_groups, self.weight, self.bias, self.eps, channel_axis, axes)


class RMSNorm(Module):
    """Root-mean-square normalization over `axes`, times a learned weight (plus a bias if asked)."""

    def __init__(self, hidden_size: int, axes, epsilon: float = 1e-5, bias: bool = True,
                 dtype: str = "float32"):
        self.epsilon = epsilon
        self.axes = [axes] if isinstance(axes, int) else list(axes)
        self.weight = Parameter((hidden_size,), dtype)
        self.bias = Parameter((hidden_size,), dtype) if bias else None

    def forward(self, x: Tensor) -> Tensor:
        out = op.rms_norm(x, self.weight, self.axes, self.epsilon)
        return op.add(out, self.bias) if self.bias is not None else out


class Embedding(Module):
    """Rows of a (num, dim) table picked by integer indices."""

    def __init__(self, num: int, dim: int, dtype: str = "float32"):
        self.num, self.dim = num, dim
        self.weight = Parameter((num, dim), dtype)

    def forward(self, x: Tensor) -> Tensor:
        if x.ndim == 1:
            return op.take(self.weight, x, axis=0)
        # as TVM: the indices flattened, the rows picked, then the indices' shape restored
        count = 1
        for d in x.shape:
            count = count * d
        rows = op.take(self.weight, op.reshape(x, [count]), axis=0)
        return op.reshape(rows, [*x.shape, self.dim])


class ModuleList(Module):
    """A list of modules (parameters named `<attr>.<index>.<name>`); calling it chains them."""

    def __init__(self, modules):
        self.modules = list(modules)

    def named_children(self):
        return ((str(i), m) for i, m in enumerate(self.modules))

    def __iter__(self):
        return iter(self.modules)

    def __getitem__(self, index):
        return self.modules[index]

    def __len__(self) -> int:
        return len(self.modules)

    def append(self, module: Module) -> None:
        self.modules.append(module)

    def forward(self, x):
        for module in self.modules:
            x = module(x)
        return x


class ModuleDict(Module):
    """Modules by name (parameters named `<attr>.<key>.<name>`)."""

    def __init__(self, modules: dict):
        self.modules = dict(modules)

    def named_children(self):
        return iter(self.modules.items())

    def __getitem__(self, key):
        return self.modules[key]

    def __iter__(self):
        return iter(self.modules)

    def __len__(self) -> int:
        return len(self.modules)

    def keys(self):
        return self.modules.keys()

    def values(self):
        return self.modules.values()

    def items(self):
        return self.modules.items()


class Timesteps(Module):
    """Sinusoidal embeddings of timesteps (diffusion models), `num_channels` wide."""

    def __init__(self, num_channels: int, flip_sin_to_cos: bool = False, downscale_freq_shift: float = 1):
        self.num_channels = num_channels
        self.flip_sin_to_cos = flip_sin_to_cos
        self.downscale_freq_shift = downscale_freq_shift

    def forward(self, x: Tensor) -> Tensor:
        return op.get_timestep_embedding(x, self.num_channels, self.flip_sin_to_cos,
                                         self.downscale_freq_shift)


_ACTIVATIONS = {"silu": op.silu, "relu": op.relu, "gelu": op.gelu}


class TimestepEmbedding(Module):
    """linear_1, activation, linear_2 over a timestep embedding; `cond_proj_dim` adds a projected
    condition to the sample first."""

    def __init__(self, in_channels: int, time_embed_dim: int, act_fn: str = "silu",
                 out_dim: int | None = None, post_act_fn: str | None = None,
                 cond_proj_dim: int | None = None):
        self.linear_1 = Linear(in_channels, time_embed_dim)
        self.cond_proj = Linear(cond_proj_dim, in_channels, bias=False) if cond_proj_dim is not None else None
        if act_fn not in _ACTIVATIONS or (post_act_fn is not None and post_act_fn not in _ACTIVATIONS):
            raise ValueError(f"TimestepEmbedding: activations are one of {sorted(_ACTIVATIONS)}")
        self.act_fn, self.post_act_fn = act_fn, post_act_fn
        self.linear_2 = Linear(time_embed_dim, out_dim if out_dim is not None else time_embed_dim)

    def forward(self, sample: Tensor, condition: Tensor | None = None) -> Tensor:
        if condition is not None:
            if self.cond_proj is None:
                raise ValueError("TimestepEmbedding: a condition needs cond_proj_dim")
            sample = sample + self.cond_proj(condition)
        sample = _ACTIVATIONS[self.act_fn](self.linear_1(sample))
        sample = self.linear_2(sample)
        return _ACTIVATIONS[self.post_act_fn](sample) if self.post_act_fn is not None else sample


class Attention(Module):
    """Multi-head (cross-)attention of diffusion models: to_q/to_k/to_v projections, an optional
    group norm of the hidden states, scaled dot-product attention, and to_out[0]."""

    def __init__(self, query_dim: int, cross_attention_dim: int | None = None, heads: int = 8,
                 dim_head: int = 64, bias: bool = False, norm_num_groups: int | None = None,
                 out_bias: bool = True, scale_qk: bool = True):
        inner = dim_head * heads
        self.heads, self.dim_head = heads, dim_head
        self.scale = None if scale_qk else 1.0
        kv_dim = cross_attention_dim if cross_attention_dim is not None else query_dim
        self.to_q = Linear(query_dim, inner, bias=bias)
        self.to_k = Linear(kv_dim, inner, bias=bias)
        self.to_v = Linear(kv_dim, inner, bias=bias)
        self.group_norm = GroupNorm(norm_num_groups, query_dim, eps=1e-5) if norm_num_groups else None
        self.to_out = ModuleList([Linear(inner, query_dim, bias=out_bias)])

    def forward(self, hidden_states: Tensor, encoder_hidden_states: Tensor | None = None,
                attention_mask: Tensor | None = None) -> Tensor:
        batch, seq = hidden_states.shape[0], hidden_states.shape[1]
        if self.group_norm is not None:
            hidden_states = self.group_norm(hidden_states, channel_axis=2, axes=[1])
        context = encoder_hidden_states if encoder_hidden_states is not None else hidden_states
        q, k, v = self.to_q(hidden_states), self.to_k(context), self.to_v(context)
        kv_seq = context.shape[1]
        q = op.reshape(q, [batch, seq, self.heads, self.dim_head])
        k = op.reshape(k, [batch, kv_seq, self.heads, self.dim_head])
        v = op.reshape(v, [batch, kv_seq, self.heads, self.dim_head])
        out = op.scaled_dot_product_attention(q, k, v, attention_mask, scale=self.scale)
        out = op.reshape(out, [batch, seq, self.heads * self.dim_head])
        return self.to_out[0](out)
