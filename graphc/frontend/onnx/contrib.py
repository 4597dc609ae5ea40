"""The Microsoft contrib operators (domain `com.microsoft`) that ONNX Runtime-optimised
transformer models carry: Gelu, FastGelu, BiasGelu, QuickGelu, LayerNormalization,
SkipLayerNormalization, SimplifiedLayerNormalization, SkipSimplifiedLayerNormalization,
Attention, MultiHeadAttention, RotaryEmbedding.

These operators have no ONNX schema: each converter names its attributes' defaults (ONNX
Runtime's), and anything else (past key/value state, packed QKV, ...) is refused by name.
Attention is `relax.nn.attention` in TVM's (batch, sequence, heads, head size) layout.
"""

from __future__ import annotations

from ... import relax
from .common import Emitting, const_like, dtype_of, ndim_of, norm_axis, shape_expr, shape_of
from .registry import converter

op = Emitting(relax.op)
MS = "com.microsoft"


def _c(value, like):
    return const_like(value, like)


# -- activations ----------------------------------------------------------------------------


@converter("Gelu", domain=MS)
def gelu(node):
    return op.nn.gelu(node.input(0))


@converter("BiasGelu", domain=MS)
def bias_gelu(node):
    return op.nn.gelu(op.add(node.input(0), node.input(1)))


@converter("FastGelu", domain=MS)
def fast_gelu(node):
    x = node.input(0)
    if node.has_input(1):
        x = op.add(x, node.input(1))
    return op.nn.gelu_tanh(x)


@converter("QuickGelu", domain=MS)
def quick_gelu(node):
    x = node.input(0)
    alpha = float(node.attr("alpha", 1.702))
    return op.multiply(x, op.sigmoid(op.multiply(x, _c(alpha, x))))


# -- normalizations -------------------------------------------------------------------------


def _layer_norm(x, gamma, beta, axis: int, eps: float, simplified: bool):
    ndim = ndim_of(x)
    axes = list(range(axis, ndim))
    tail = shape_expr(shape_of(x)[axis:])
    if ndim_of(gamma) != len(axes):
        gamma = op.broadcast_to(gamma, tail)
    if simplified:
        y = op.nn.rms_norm(x, gamma, axes=axes, epsilon=eps)
        return y if beta is None else op.add(y, beta)
    if beta is None:
        beta = op.zeros_like(gamma)
    elif ndim_of(beta) != len(axes):
        beta = op.broadcast_to(beta, tail)
    return op.nn.layer_norm(x, gamma, beta, axes=axes, epsilon=eps)


@converter("LayerNormalization", "SimplifiedLayerNormalization", domain=MS)
def layer_norm(node):
    x = node.input(0)
    axis = norm_axis(int(node.attr("axis", -1)), ndim_of(x), node)
    eps = float(node.attr("epsilon", 1e-5))
    if int(node.attr("stash_type", 1)) != 1:
        raise node.unsupported("stash_type")
    if any(node.outputs[1:]):
        raise node.error("the mean / inverse standard deviation outputs are not supported")
    simplified = node.op_type.startswith("Simplified")
    return _layer_norm(x, node.input(1), node.input(2), axis, eps, simplified)


@converter("SkipLayerNormalization", "SkipSimplifiedLayerNormalization", domain=MS)
def skip_layer_norm(node):
    """LayerNorm(input + skip + bias); the optional outputs are the mean, the inverse standard
    deviation (each keeping the normalized axis with size 1) and the sum itself."""
    x = op.add(node.input(0), node.input(1))
    simplified = node.op_type.startswith("SkipSimplified")
    beta = None if simplified else node.input(3)
    bias_index = 3 if simplified else 4
    if node.has_input(bias_index):
        x = op.add(x, node.input(bias_index))
    eps = float(node.attr("epsilon", 1e-5))
    axis = ndim_of(x) - 1
    y = _layer_norm(x, node.input(2), beta, axis, eps, simplified)
    wanted = [i < len(node.outputs) and bool(node.outputs[i]) for i in range(4)]
    if not any(wanted[1:]):
        return y
    if simplified and wanted[1]:
        raise node.error("output 1 (mean) is not computed by SkipSimplifiedLayerNormalization")
    mean = op.mean(x, axis=[axis], keepdims=True)
    centered = x if simplified else op.subtract(x, mean)
    var = op.mean(op.multiply(centered, centered), axis=[axis], keepdims=True)
    inv = op.rsqrt(op.add(var, _c(eps, x)))
    return tuple([y, mean, inv, x][: len(node.outputs)])


# -- attention ------------------------------------------------------------------------------


def _heads(x, num_heads: int):
    """(batch, seq, heads * size) -> (batch, seq, heads, size)."""
    b, s, hidden = shape_of(x)
    return op.reshape(x, shape_expr([b, s, num_heads, hidden // num_heads]))


def _merge_heads(x):
    b, s, n, h = shape_of(x)
    return op.reshape(x, shape_expr([b, s, n * h]))


def _padding_mask(node, mask, batch, total):
    """A 2-d (batch, kv length) 0/1 mask as a bool bias (batch, 1, 1, kv length)."""
    if dtype_of(mask) == "bool":
        keep = mask
    else:
        keep = op.not_equal(mask, _c(0, mask))
    return op.reshape(keep, shape_expr([batch, 1, 1, total]))


def _attend(node, q, k, v, num_heads: int, scale, causal: bool, mask=None, bias=None):
    """`mask` (bool, True: attend) adds `mask_filter_value` to the masked scores, as ONNX
    Runtime does: a row with every key masked averages all of them, where -inf would give
    0 / 0."""
    q, k, v = _heads(q, num_heads), _heads(k, num_heads), _heads(v, num_heads)
    combined = bias
    if mask is not None:
        filter_value = relax.const(float(node.attr("mask_filter_value", -10000.0)), dtype_of(q))
        filtered = op.where(mask, _c(0.0, q), filter_value)
        combined = filtered if bias is None else op.add(bias, filtered)
    out = op.nn.attention(q, k, v, combined, scale=scale, causal_mask="TopLeft" if causal else None)
    return _merge_heads(out)


def _scale(node):
    scale = node.attr("scale", 0.0)
    return None if not scale else float(scale)


@converter("Attention", domain=MS)
def attention(node):
    """ONNX Runtime's fused self-attention: `input @ weights + bias` split into Q, K and V."""
    x, w = node.input(0), node.input(1)
    num_heads = int(node.attr("num_heads"))
    causal = bool(node.attr("unidirectional", 0))
    for name in ("do_rotary", "past_present_share_buffer"):
        if node.attr(name, 0):
            raise node.unsupported(name)
    for index, what in ((4, "past"), (6, "past_sequence_length")):
        if node.has_input(index):
            raise node.error(f"input {index} ({what}) is not supported: graphc compiles stateless attention")
    if any(node.outputs[1:]):
        raise node.error("output 1 (present) is not supported: graphc compiles stateless attention")
    qkv = op.matmul(x, w)
    if node.has_input(2):
        qkv = op.add(qkv, node.input(2))
    total = shape_of(w)[1]
    sizes = node.attr("qkv_hidden_sizes", None)
    if sizes is None:
        sizes = [int(total) // 3] * 3
    cuts = [0, sizes[0], sizes[0] + sizes[1], sizes[0] + sizes[1] + sizes[2]]
    q, k, v = (op.strided_slice(qkv, [2], [cuts[i]], [cuts[i + 1]]) for i in range(3))
    batch, seq = shape_of(x)[:2]
    mask = None
    if node.has_input(3):
        raw = node.input(3)
        if ndim_of(raw) != 2:
            raise node.error(f"mask_index of rank {ndim_of(raw)} is not supported: give a 2-d (batch, "
                             "sequence) 0/1 mask")
        mask = _padding_mask(node, raw, batch, seq)
    bias = node.input(5) if node.has_input(5) else None
    return _attend(node, q, k, v, num_heads, _scale(node), causal, mask, bias)


@converter("MultiHeadAttention", domain=MS)
def multi_head_attention(node):
    """Attention of separate (batch, sequence, hidden) query, key and value projections."""
    q, k, v = node.input(0), node.input(1), node.input(2)
    num_heads = int(node.attr("num_heads"))
    causal = bool(node.attr("unidirectional", 0))
    for index, what in ((6, "past_key"), (7, "past_value")):
        if node.has_input(index):
            raise node.error(f"input {index} ({what}) is not supported: graphc compiles stateless attention")
    if any(node.outputs[1:]):
        raise node.error("outputs present_key/present_value are not supported")
    if ndim_of(k) != 3 or ndim_of(v) != 3:
        raise node.error("key and value must be 3-d (batch, sequence, hidden): packed or 4-d key/value "
                         "are not supported")
    if node.has_input(3):  # the three projections' biases, concatenated
        bias = node.input(3)
        hq, hk = shape_of(q)[2], shape_of(k)[2]
        hv = shape_of(v)[2]
        cuts = [0, hq, hq + hk, hq + hk + hv]
        q, k, v = (op.add(t, op.strided_slice(bias, [0], [cuts[i]], [cuts[i + 1]]))
                   for i, t in enumerate((q, k, v)))
    mask = None
    if node.has_input(4):
        raw = node.input(4)
        if ndim_of(raw) != 2:
            raise node.error(f"key_padding_mask of rank {ndim_of(raw)} is not supported: give a 2-d "
                             "(batch, kv sequence) 0/1 mask")
        mask = _padding_mask(node, raw, shape_of(q)[0], shape_of(k)[1])
    bias = node.input(5) if node.has_input(5) else None
    return _attend(node, q, k, v, num_heads, _scale(node), causal, mask, bias)


@converter("RotaryEmbedding", domain=MS)
def rotary_embedding(node):
    """Rotate pairs of features by the cached angles at each position (half-split pairs, or
    interleaved ones); a 3-d (batch, seq, hidden) input needs `num_heads`."""
    x, pos, cos, sin = (node.input(i) for i in range(4))
    interleaved = bool(node.attr("interleaved", 0))
    if node.attr("is_packed_batching", 0):
        raise node.unsupported("is_packed_batching")
    if node.attr("rotary_embedding_dim", 0):
        raise node.unsupported("rotary_embedding_dim", why="(partial rotation) is not supported")
    if float(node.attr("scale", 1.0)) != 1.0:
        raise node.unsupported("scale")
    ndim = ndim_of(x)
    if ndim == 3:
        num_heads = int(node.attr("num_heads", 0))
        if not num_heads:
            raise node.error("a 3-d input needs the num_heads attribute")
        b, s, hidden = shape_of(x)
        xh = op.reshape(x, shape_expr([b, s, num_heads, hidden // num_heads]))
    elif ndim == 4:  # (batch, heads, seq, size)
        node.attr("num_heads", 0)
        xh = op.permute_dims(x, [0, 2, 1, 3])
    else:
        raise node.error(f"an input of rank {ndim} is not supported (3-d or 4-d)")
    b, s, n, h = shape_of(xh)
    if ndim_of(pos) == 1:  # one offset: positions offset + 0..s-1
        steps = op.arange(0, s, 1, dtype=dtype_of(pos))
        pos = op.add(op.reshape(steps, shape_expr([1, s])), pos)
    c = op.expand_dims(op.take(cos, pos, axis=0), [2])  # (b, s, 1, h/2)
    si = op.expand_dims(op.take(sin, pos, axis=0), [2])
    half = h // 2
    if interleaved:
        pairs = op.reshape(xh, shape_expr([b, s, n, half, 2]))
        x1 = op.squeeze(op.strided_slice(pairs, [4], [0], [1]), [4])
        x2 = op.squeeze(op.strided_slice(pairs, [4], [1], [2]), [4])
    else:
        x1 = op.strided_slice(xh, [3], [0], [half])
        x2 = op.strided_slice(xh, [3], [half], [h])
    r1 = op.subtract(op.multiply(x1, c), op.multiply(x2, si))
    r2 = op.add(op.multiply(x2, c), op.multiply(x1, si))
    if interleaved:
        out = op.reshape(op.stack([r1, r2], axis=4), shape_expr([b, s, n, h]))
    else:
        out = op.concat([r1, r2], axis=3)
    if ndim == 3:
        return op.reshape(out, shape_expr([b, s, n * h]))
    return op.permute_dims(out, [0, 2, 1, 3])
