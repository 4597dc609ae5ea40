"""`graphc.compile` schedules and lowers the kernels of a large module on all cores
(`graphc.driver.map_kernels`): the kernels it makes, their LLVM IR and the model's results are
the same as when one process does it all (`GRAPHC_COMPILE_JOBS=1`), on small configs of the
models the compile-time benchmark times (BERT and a bottleneck ResNet)."""

import numpy as np
import pytest
import torch

from graphc import IRModule, driver
from graphc.frontend.torch import from_exported_program
from graphc.ir import structural_hash
from graphc.ir.transform import _GLOBAL_INSTRUMENTS
from graphc.target import Target
from graphc.target.llvm.codegen import codegen_module
from graphc.tir import PrimFunc

tf = pytest.importorskip("transformers")


@pytest.fixture
def no_global_instruments():
    """The suite's round-trip check is a pass instrument, under which kernels stay in this
    process; here it steps aside (the modules it would check are compared below instead)."""
    saved = list(_GLOBAL_INSTRUMENTS)
    _GLOBAL_INSTRUMENTS.clear()
    try:
        yield
    finally:
        _GLOBAL_INSTRUMENTS[:] = saved


def _kernels(mod) -> dict:
    return {gv.name_hint: func for gv, func in mod.items() if isinstance(func, PrimFunc)}


def _compile_both(monkeypatch, model, inputs):
    with torch.no_grad():
        ep = torch.export.export(model.eval(), inputs)
        want = model(*inputs)
    mod = from_exported_program(ep)
    monkeypatch.setenv("GRAPHC_CACHE", "0")
    monkeypatch.setattr(driver, "PARALLEL_MIN_KERNELS", 2)
    calls = []
    original = driver._fork
    monkeypatch.setattr(driver, "_fork", lambda *a: calls.append(1) or original(*a))
    out = {}
    for jobs in ("1", "2"):
        monkeypatch.setenv("GRAPHC_COMPILE_JOBS", jobs)
        stages = dict(driver.iter_stages(mod))  # one compile: its lowered kernels and executable
        out[jobs] = (stages["lowered"], stages["bytecode"])
    assert calls, "the kernels were not shared out"
    return out, want


def _assert_same(out):
    serial, parallel = _kernels(out["1"][0]), _kernels(out["2"][0])
    assert list(serial) == list(parallel)
    target = Target("llvm")
    for name, func in serial.items():
        other = parallel[name]
        assert func.script() == other.script(), name
        assert structural_hash(func) == structural_hash(other), name
        ir_serial = str(codegen_module(IRModule({name: func}), target)[0])
        ir_parallel = str(codegen_module(IRModule({name: other}), target)[0])
        assert ir_serial == ir_parallel, name


def test_bert_kernels_same_on_all_cores(monkeypatch, no_global_instruments):
    torch.manual_seed(0)
    config = tf.BertConfig(vocab_size=64, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                           intermediate_size=32, max_position_embeddings=32)
    ids = torch.randint(0, 64, (1, 8))
    out, want = _compile_both(monkeypatch, tf.BertModel(config, add_pooling_layer=False), (ids,))
    _assert_same(out)
    for _, exe in out.values():
        got = exe(ids)
        np.testing.assert_allclose(got["last_hidden_state"].numpy(), want.last_hidden_state.numpy(),
                                   rtol=1e-4, atol=1e-5)


def test_resnet_kernels_same_on_all_cores(monkeypatch, no_global_instruments):
    torch.manual_seed(0)
    config = tf.ResNetConfig(num_channels=3, embedding_size=8, hidden_sizes=[16, 32], depths=[1, 1],
                             layer_type="bottleneck", num_labels=3)
    x = torch.randn(1, 3, 32, 32)
    out, want = _compile_both(monkeypatch, tf.ResNetForImageClassification(config), (x,))
    _assert_same(out)
    for _, exe in out.values():
        np.testing.assert_allclose(exe(x)["logits"].numpy(), want.logits.numpy(), rtol=1e-4, atol=1e-5)
