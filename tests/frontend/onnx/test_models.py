"""ONNX exports of `transformers` models built from tiny configs (no downloads), exported with
`torch.onnx.export` at opset 17, imported, compiled and compared with ONNX Runtime."""

import io
import warnings

import numpy as np
import onnx
import pytest
import torch
from onnx_testing import run_ort

from graphc.frontend.onnx import InferenceSession

tf = pytest.importorskip("transformers")


class _ByName(torch.nn.Module):
    """The model called with keyword inputs, returning its outputs as a tuple of tensors."""

    def __init__(self, model, names):
        super().__init__()
        self.model, self.names = model, names

    def forward(self, *args):
        return self.model(**dict(zip(self.names, args)), return_dict=False)


def _export(model, inputs, names, dynamic_axes=None):
    torch.manual_seed(0)
    buffer = io.BytesIO()
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(_ByName(model, names).eval(), inputs, buffer, input_names=names, opset_version=17,
                          dynamo=False, dynamic_axes=dynamic_axes)
    return onnx.load_from_string(buffer.getvalue())


def _check(model, inputs, names, rtol=1e-4, atol=1e-5, dynamic_axes=None):
    proto = _export(model, inputs, names, dynamic_axes)
    feeds = [x.numpy() for x in inputs]
    sess = InferenceSession(proto, cache_dir=False)
    got = sess.run(None, dict(zip(names, feeds)))
    want = run_ort(proto, feeds)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)
    return proto


def test_bert():
    config = tf.BertConfig(vocab_size=64, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                           intermediate_size=32, max_position_embeddings=32)
    ids = torch.randint(0, 64, (2, 8))
    mask = torch.ones(2, 8, dtype=torch.int64)
    mask[1, 5:] = 0
    _check(tf.BertModel(config), (ids, mask), ["input_ids", "attention_mask"])


def test_gpt2():
    config = tf.GPT2Config(vocab_size=64, n_embd=16, n_layer=2, n_head=2, n_positions=32, use_cache=False,
                           bos_token_id=0, eos_token_id=0)
    ids, mask = torch.randint(0, 64, (1, 8)), torch.ones(1, 8, dtype=torch.int64)
    positions = torch.arange(8).reshape(1, 8)  # given, so the exporter meets no packed-sequence check
    names = ["input_ids", "attention_mask", "position_ids"]
    _check(tf.GPT2LMHeadModel(config), (ids, mask, positions), names)


def test_vit():
    config = tf.ViTConfig(image_size=16, patch_size=8, num_channels=3, hidden_size=16, num_hidden_layers=1,
                          num_attention_heads=2, intermediate_size=32, num_labels=3)
    _check(tf.ViTForImageClassification(config), (torch.randn(1, 3, 16, 16),), ["pixel_values"])


def test_resnet():
    config = tf.ResNetConfig(num_channels=3, embedding_size=8, hidden_sizes=[8, 16], depths=[1, 1],
                             layer_type="bottleneck", num_labels=3)
    _check(tf.ResNetForImageClassification(config), (torch.randn(1, 3, 32, 32),), ["pixel_values"])


def _check_sizes(proto, make_inputs, names, sizes, rtol=1e-4, atol=1e-5):
    """One compiled session of a model with symbolic batch and sequence, run at every size of
    `sizes` and compared with ONNX Runtime."""
    sess = InferenceSession(proto, cache_dir=False)
    for batch, seq in sizes:
        feeds = make_inputs(batch, seq)
        got = sess.run(None, dict(zip(names, feeds)))
        want = run_ort(proto, feeds)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert g.shape == w.shape
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)


def _dynamic(names):
    return {n: {0: "batch", 1: "sequence"} for n in names}


def test_bert_dynamic_batch_and_sequence():
    """The exporter's shape chains (Shape -> Equal(-1) -> Where -> Expand, the position table
    sliced to the sequence) fold to the symbolic sizes: one executable serves every size."""
    config = tf.BertConfig(vocab_size=64, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                           intermediate_size=32, max_position_embeddings=32)
    names = ["input_ids", "attention_mask"]
    ids, mask = torch.randint(0, 64, (2, 8)), torch.ones(2, 8, dtype=torch.int64)
    proto = _export(tf.BertModel(config), (ids, mask), names, _dynamic(names))
    rng = np.random.default_rng(0)

    def make_inputs(batch, seq):
        mask = np.ones((batch, seq), dtype=np.int64)
        mask[0, seq // 2:] = 0
        return [rng.integers(0, 64, (batch, seq)), mask]

    _check_sizes(proto, make_inputs, names, [(2, 8), (1, 5), (3, 13), (1, 1)])


def test_gpt2_dynamic_batch_and_sequence():
    config = tf.GPT2Config(vocab_size=64, n_embd=16, n_layer=2, n_head=2, n_positions=32, use_cache=False,
                           bos_token_id=0, eos_token_id=0)
    names = ["input_ids", "attention_mask", "position_ids"]
    ids, mask = torch.randint(0, 64, (1, 8)), torch.ones(1, 8, dtype=torch.int64)
    proto = _export(tf.GPT2LMHeadModel(config), (ids, mask, torch.arange(8).reshape(1, 8)), names,
                    _dynamic(names))
    rng = np.random.default_rng(0)

    def make_inputs(batch, seq):
        positions = np.broadcast_to(np.arange(seq), (batch, seq)).copy()
        return [rng.integers(0, 64, (batch, seq)), np.ones((batch, seq), dtype=np.int64), positions]

    _check_sizes(proto, make_inputs, names, [(1, 8), (2, 5), (1, 17)])


def test_bert_dynamic_imports_without_broadcast_gathers():
    """The symbolic sizes stay the input's: no `select(n == 1, ...)` broadcast sizes (they made
    the compile take minutes). One gather remains: the position table sliced to min(sequence,
    32) broadcast to the sequence (sizes that agree whenever the model is valid)."""
    from graphc.frontend.onnx import from_onnx

    config = tf.BertConfig(vocab_size=64, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                           intermediate_size=32, max_position_embeddings=32)
    names = ["input_ids", "attention_mask"]
    ids, mask = torch.randint(0, 64, (2, 8)), torch.ones(2, 8, dtype=torch.int64)
    text = from_onnx(_export(tf.BertModel(config), (ids, mask), names, _dynamic(names))).script()
    assert "Select" not in text and text.count("R.floor_mod") == 1
    assert "R.Tensor((batch, sequence, 16)" in text
