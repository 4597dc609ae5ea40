"""relax.frontend.nn (graphc.nn): authoring modules, export_tvm, and running the export."""

from pathlib import Path

import numpy as np
import pytest
import torch

import graphc
from graphc import relax, tir
from graphc.relax.frontend import nn

TUTORIAL = Path(__file__).parents[2] / "data" / "ir_module_tutorial"


class RelaxModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 256)
        self.relu1 = nn.ReLU()
        self.fc2 = nn.Linear(256, 10)

    def forward(self, x):
        x = self.fc1(x)
        x = self.relu1(x)
        x = self.fc2(x)
        return x


def test_tutorial_export_prints_like_the_tutorial():
    mod, params = RelaxModel().export_tvm({"forward": {"x": nn.spec.Tensor((1, 784), "float32")}})
    assert mod.script() == (TUTORIAL / "from_nn_module.txt").read_text().rstrip("\n")
    assert [(name, tuple(p.shape)) for name, p in params] == [
        ("fc1_weight", (256, 784)), ("fc1_bias", (256,)), ("fc2_weight", (10, 256)), ("fc2_bias", (10,))]
    assert graphc.nn is nn


def _run(mod, func, inputs, params):
    exe = graphc.compile(mod, target="llvm")
    return relax.VirtualMachine(exe, graphc.cpu())[func](*inputs, *params)


def _random_params(params, rng):
    return [rng.uniform(-0.5, 0.5, [int(d) for d in p.shape]).astype(p.dtype) for _, p in params]


def test_symbolic_batch_compiles_once_and_runs_at_several_sizes():
    mod, params = RelaxModel().export_tvm({"forward": {"x": nn.spec.Tensor(("n", 784), "float32")}})
    (x_var, *_) = mod["forward"].params
    assert isinstance(x_var.struct_info.shape_values[0], tir.Var)
    rng = np.random.default_rng(0)
    values = _random_params(params, rng)
    w1, b1, w2, b2 = values
    vm = relax.VirtualMachine(graphc.compile(mod), graphc.cpu())
    for n in (1, 3):
        x = rng.standard_normal((n, 784)).astype("float32")
        out = vm["forward"](x, *values).numpy()
        np.testing.assert_allclose(out, np.maximum(x @ w1.T + b1, 0) @ w2.T + b2, rtol=1e-4, atol=1e-5)


class Block(nn.Module):
    def __init__(self):
        self.conv = nn.Conv2D(3, 4, 3, padding=1)
        self.norm = nn.LayerNorm(8)
        self.emb = nn.Embedding(10, 8)
        self.act = nn.GELU()
        self.silu = nn.SiLU()

    def forward(self, image, ids):
        y = self.act(self.conv(image))
        z = self.silu(self.norm(self.emb(ids)))
        return y, z


def test_layers_match_torch():
    mod, params = Block().export_tvm({"forward": {"image": nn.spec.Tensor((1, 3, 8, 8), "float32"),
                                                  "ids": nn.spec.Tensor((2, 5), "int64")}})
    assert [name for name, _ in params] == [
        "conv_weight", "conv_bias", "norm_weight", "norm_bias", "emb_weight"]
    rng = np.random.default_rng(1)
    cw, cb, lw, lb, ew = _random_params(params, rng)
    image = rng.standard_normal((1, 3, 8, 8)).astype("float32")
    ids = np.array([[1, 2, 3, 0, 9], [4, 4, 5, 6, 7]])
    y, z = _run(mod, "forward", [image, ids], [cw, cb, lw, lb, ew])
    t = torch.from_numpy
    ref_y = torch.nn.functional.gelu(torch.nn.functional.conv2d(t(image), t(cw), t(cb), padding=1))
    ref_z = torch.nn.functional.silu(torch.nn.functional.layer_norm(t(ew)[t(ids)], (8,), t(lw), t(lb)))
    np.testing.assert_allclose(y.numpy(), ref_y.numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(z.numpy(), ref_z.numpy(), rtol=1e-4, atol=1e-5)


def test_tensor_operators_and_functional_ops():
    class Net(nn.Module):
        def forward(self, a, b):
            c = (a + b) * 2.0 - a / 4.0
            return nn.op.softmax(c @ b.permute_dims(), axis=-1), nn.op.concat([a, b], dim=0).reshape(4, 3)

    mod, params = Net().export_tvm({"forward": {"a": nn.spec.Tensor((2, 3)), "b": nn.spec.Tensor((2, 3))}})
    assert params == []
    a = np.arange(6, dtype="float32").reshape(2, 3) / 10
    b = np.ones((2, 3), "float32")
    s, r = _run(mod, "forward", [a, b], [])
    c = (a + b) * 2 - a / 4
    e = np.exp(c @ b.T - (c @ b.T).max(-1, keepdims=True))
    np.testing.assert_allclose(s.numpy(), e / e.sum(-1, keepdims=True), rtol=1e-5)
    np.testing.assert_allclose(r.numpy(), np.concatenate([a, b]).reshape(4, 3))


def test_bad_specs_are_rejected():
    with pytest.raises(TypeError, match="expects"):
        RelaxModel().export_tvm({})
    with pytest.raises(AttributeError, match="no method 'decode'"):
        RelaxModel().export_tvm({"decode": {"x": nn.spec.Tensor((1, 784))}})
    with pytest.raises(TypeError, match="expected nn.spec.Tensor"):
        RelaxModel().export_tvm({"forward": {"x": (1, 784)}})
    with pytest.raises(ValueError, match="non-negative int or a name"):
        nn.spec.Tensor((1.5, 2))
    with pytest.raises(RuntimeError, match="only while a module is exported"):
        nn.op.relu(nn.Tensor(None))
    with pytest.raises(ValueError, match="groups=2 must divide"):
        nn.Conv2D(3, 4, 3, groups=2)
