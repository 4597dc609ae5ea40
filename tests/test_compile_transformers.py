"""`transformers` models, built from tiny configs (no weights are downloaded), go through
`graphc.compile` as they are: the classes are transformers', not torch's, and the results come
back as named outputs with the same fields as the model's `ModelOutput`."""

import numpy as np
import pytest
import torch

import graphc
from graphc.vm import NamedOutputs

tf = pytest.importorskip("transformers")


def _check(model, *inputs, atol=1e-5):
    torch.manual_seed(0)
    model = model.eval()
    exe = graphc.compile(model, example_inputs=inputs)
    out = exe(*inputs)
    with torch.no_grad():
        want = model(*inputs)
    assert isinstance(out, NamedOutputs) and out.type_name == type(want).__name__
    assert list(out) == list(want.keys())
    for key, value in want.items():
        np.testing.assert_allclose(out[key].numpy(), value.numpy(), rtol=1e-4, atol=atol, err_msg=key)
    return out


def test_bert():
    config = tf.BertConfig(vocab_size=64, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                           intermediate_size=32, max_position_embeddings=32)
    out = _check(tf.BertModel(config), torch.randint(0, 64, (2, 8)))
    assert out.last_hidden_state.shape == (2, 8, 16) and out.pooler_output.shape == (2, 16)


def test_gpt2():
    config = tf.GPT2Config(vocab_size=64, n_embd=16, n_layer=1, n_head=2, n_positions=32, use_cache=False,
                           bos_token_id=0, eos_token_id=0)
    out = _check(tf.GPT2LMHeadModel(config), torch.randint(0, 64, (1, 8)))
    assert out.logits.shape == (1, 8, 64)


def test_vit():
    config = tf.ViTConfig(image_size=16, patch_size=8, num_channels=3, hidden_size=16, num_hidden_layers=1,
                          num_attention_heads=2, intermediate_size=32, num_labels=3)
    out = _check(tf.ViTForImageClassification(config), torch.randn(1, 3, 16, 16))
    assert out.logits.shape == (1, 3)


def test_resnet():
    config = tf.ResNetConfig(num_channels=3, embedding_size=8, hidden_sizes=[8, 16], depths=[1, 1],
                             layer_type="basic", num_labels=3)
    out = _check(tf.ResNetForImageClassification(config), torch.randn(1, 3, 32, 32))
    assert out.logits.shape == (1, 3)
