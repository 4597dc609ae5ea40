"""The com.microsoft contrib operators against ONNX Runtime (their only reference)."""

import numpy as np
import pytest
from onnx_testing import check_node, rand

from graphc.errors import FrontendError

MS = "com.microsoft"


def _ort(op_type, inputs, attrs=None, num_outputs=1, rtol=1e-4, atol=1e-5):
    return check_node(op_type, inputs, attrs, domain=MS, num_outputs=num_outputs, reference="ort",
                      rtol=rtol, atol=atol)


def test_gelu_family():
    x, bias = rand(2, 3, 8), rand(8, seed=1)
    _ort("Gelu", [x])
    _ort("BiasGelu", [x, bias])
    _ort("FastGelu", [x, bias])
    _ort("FastGelu", [x])
    _ort("QuickGelu", [x], {"alpha": 1.5})


def test_layer_normalizations():
    x, gamma, beta = rand(2, 3, 8), rand(8, seed=1), rand(8, seed=2)
    mean, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    expected = (x - mean) / np.sqrt(var + 1e-3) * gamma + beta
    check_node("LayerNormalization", [x, gamma, beta], {"epsilon": 1e-3}, domain=MS, expected=[expected],
               rtol=1e-4, atol=1e-5)
    rms = x / np.sqrt((x * x).mean(-1, keepdims=True) + 1e-5) * gamma
    check_node("SimplifiedLayerNormalization", [x, gamma], domain=MS, expected=[rms], rtol=1e-4, atol=1e-5)
    skip, bias = rand(2, 3, 8, seed=3), rand(8, seed=4)
    _ort("SkipLayerNormalization", [x, skip, gamma, beta, bias])
    _ort("SkipLayerNormalization", [x, skip, gamma, beta, bias], num_outputs=4)
    _ort("SkipSimplifiedLayerNormalization", [x, skip, gamma, bias])


def test_attention_past_state_is_refused():
    from onnx import TensorProto, helper
    from onnx_testing import make_model

    from graphc.frontend.onnx import from_onnx

    node = helper.make_node("Attention", ["x", "w", "", "", "past"], ["y"], domain=MS, num_heads=2)
    inputs = [("x", None, [1, 2, 4]), ("w", None, [4, 12]), ("past", None, [2, 1, 2, 3, 2])]
    model = make_model([node], inputs, [("y", TensorProto.FLOAT, [1, 2, 4])], domains=[(MS, 1)])
    with pytest.raises(FrontendError, match=r"input 4 \(past\) is not supported"):
        from_onnx(model)


@pytest.mark.parametrize("unidirectional", [0, 1])
def test_attention_with_padding_mask(unidirectional):
    batch, seq, hidden, heads = 2, 5, 8, 2
    x = rand(batch, seq, hidden)
    w, b = rand(hidden, 3 * hidden, seed=1), rand(3 * hidden, seed=2)
    mask = np.ones((batch, seq), "int32")
    mask[1, 3:] = 0
    _ort("Attention", [x, w, b, mask], {"num_heads": heads, "unidirectional": unidirectional})


def test_multi_head_attention_with_bias_and_mask():
    batch, seq, kv, hidden, heads = 2, 3, 4, 8, 2
    q, k, v = rand(batch, seq, hidden), rand(batch, kv, hidden, seed=1), rand(batch, kv, hidden, seed=2)
    bias = rand(3 * hidden, seed=3)
    mask = np.ones((batch, kv), "int32")
    mask[0, 2:] = 0
    _ort("MultiHeadAttention", [q, k, v, bias, mask], {"num_heads": heads})
    _ort("MultiHeadAttention", [q, k, v], {"num_heads": heads, "scale": 0.5})


@pytest.mark.parametrize("unidirectional", [0, 1])
def test_attention_with_a_fully_masked_batch_entry(unidirectional):
    """Masked scores get mask_filter_value added, as in ONNX Runtime: a batch entry with every
    key masked averages the values instead of dividing 0 by 0."""
    batch, seq, hidden, heads = 2, 4, 8, 2
    x = rand(batch, seq, hidden)
    w, b = rand(hidden, 3 * hidden, seed=1), rand(3 * hidden, seed=2)
    mask = np.ones((batch, seq), "int32")
    mask[1] = 0
    attrs = {"num_heads": heads, "unidirectional": unidirectional}
    _ort("Attention", [x, w, b, mask], attrs)
    _ort("Attention", [x, w, b, mask], dict(attrs, mask_filter_value=-50.0))
    q, k, v = rand(batch, 3, hidden), rand(batch, seq, hidden, seed=1), rand(batch, seq, hidden, seed=2)
    _ort("MultiHeadAttention", [q, k, v, None, mask], {"num_heads": heads})


@pytest.mark.parametrize("interleaved", [0, 1])
def test_rotary_embedding(interleaved):
    batch, seq, heads, size, max_seq = 2, 3, 2, 8, 6
    x = rand(batch, seq, heads * size)
    pos = np.array([[0, 1, 2], [2, 3, 4]], "int64")
    angles = np.outer(np.arange(max_seq), 1.0 / 10000 ** (np.arange(size // 2) / (size // 2)))
    cos, sin = np.cos(angles).astype("float32"), np.sin(angles).astype("float32")
    _ort("RotaryEmbedding", [x, pos, cos, sin], {"num_heads": heads, "interleaved": interleaved})
    x4 = rand(batch, heads, seq, size, seed=5)
    _ort("RotaryEmbedding", [x4, pos, cos, sin], {"interleaved": interleaved})
