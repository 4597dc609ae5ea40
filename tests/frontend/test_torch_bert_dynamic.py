"""BERT and DistilBERT (small `transformers` configs) exported with a dynamic batch (1-8) and
sequence length (2 up to max_position_embeddings): each compiles once and matches torch at
four sizes. Their position ids are a slice of a constant buffer whose end is the symbolic
sequence length (`aten.slice.Tensor(position_ids, 1, 0, sym_size_int)`), which torch.export
only accepts up to max_position_embeddings: called past it, the model raises ValueError (the
declared range stops there) and never reads past the position embedding. GPT-2, whose
position ids are an arange, exports with a range past its table: called past it, IndexError
naming the position embedding (wpe)."""

import numpy as np
import pytest
import torch

import graphc
from graphc import relax
from graphc.frontend.torch import from_exported_program

transformers = pytest.importorskip("transformers")

MAX_POSITIONS = 32


def _bert():
    config = transformers.BertConfig(vocab_size=64, hidden_size=16, num_hidden_layers=2,
                                     num_attention_heads=2, intermediate_size=32,
                                     max_position_embeddings=MAX_POSITIONS)
    return transformers.BertModel(config)


def _distilbert():
    config = transformers.DistilBertConfig(vocab_size=64, dim=16, n_layers=2, n_heads=2, hidden_dim=32,
                                           max_position_embeddings=MAX_POSITIONS)
    return transformers.DistilBertModel(config)


@pytest.mark.parametrize("make", [_bert, _distilbert], ids=["bert", "distilbert"])
def test_dynamic_batch_and_sequence(make):
    torch.manual_seed(0)
    model = make().eval()
    batch = torch.export.Dim("batch", min=1, max=8)
    seq = torch.export.Dim("seq", min=2, max=MAX_POSITIONS)
    with torch.no_grad():
        ep = torch.export.export(model, (torch.randint(0, 64, (2, 8)),), dynamic_shapes=({0: batch, 1: seq},))
    mod = from_exported_program(ep)
    assert relax.analysis.well_formed(mod)
    vm = relax.VirtualMachine(graphc.compile(mod), graphc.cpu())
    rng = np.random.default_rng(0)
    for b, s in [(1, 2), (2, 7), (3, 16), (8, MAX_POSITIONS)]:
        ids = rng.integers(0, 64, (b, s))
        out = vm["main"](ids).last_hidden_state  # results shaped like the model's
        with torch.no_grad():
            expected = model(torch.from_numpy(ids)).last_hidden_state.numpy()
        np.testing.assert_allclose(out.numpy(), expected, rtol=1e-4, atol=1e-5, err_msg=f"batch {b}, seq {s}")
    past = rf"is {MAX_POSITIONS + 1}, outside its declared range \[2, {MAX_POSITIONS}\]"
    with pytest.raises(ValueError, match=past):
        vm["main"](rng.integers(0, 64, (1, MAX_POSITIONS + 1)))
    with pytest.raises(IndexError, match=r"index 64 in input_ids is out of range \[0, 64\)"):
        vm["main"](np.full((1, 4), 64))  # a token id past the vocabulary
    ids = rng.integers(0, 64, (2, 5))  # still usable
    with torch.no_grad():
        expected = model(torch.from_numpy(ids)).last_hidden_state.numpy()
    out = vm["main"](ids).last_hidden_state
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-4, atol=1e-5)


def test_gpt2_called_past_its_position_table_names_the_position_embedding():
    # GPT-2's position ids are an arange of the sequence length, so torch.export accepts a
    # declared range past n_positions: the position embedding's check stops the call there.
    torch.manual_seed(0)
    config = transformers.GPT2Config(vocab_size=64, n_embd=16, n_layer=1, n_head=2, n_positions=16,
                                     use_cache=False)
    model = transformers.GPT2Model(config).eval()
    seq = torch.export.Dim("seq", min=2, max=32)
    with torch.no_grad():
        ep = torch.export.export(model, (torch.randint(0, 64, (1, 8)),), dynamic_shapes=({1: seq},))
    vm = relax.VirtualMachine(graphc.compile(from_exported_program(ep)), graphc.cpu())
    rng = np.random.default_rng(0)
    expected = r"(?s)index 16 in \w+ is out of range \[0, 16\).*aten\.embedding.*p_wpe_weight.*in module wpe"
    with pytest.raises(IndexError, match=expected):
        vm["main"](rng.integers(0, 64, (1, 17)))
    for s in (16, 3):  # the last position, and usable after the error
        ids = rng.integers(0, 64, (1, s))
        with torch.no_grad():
            want = model(torch.from_numpy(ids)).last_hidden_state.numpy()
        np.testing.assert_allclose(vm["main"](ids).last_hidden_state.numpy(), want, rtol=1e-4, atol=1e-5)
