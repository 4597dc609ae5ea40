"""End-to-end: graphc.compile(model, target="opencl") with the default GPU schedules runs every
model of the end-to-end set on PoCL and matches PyTorch (float32, rtol 1e-4); the same models
compile to cubins for sm_80 and sm_90. Models are tiny: PoCL on a small CPU is slow."""

import numpy as np
import pytest
import torch
from gpu_check import opencl_device

import graphc
import graphc.dlight.default as dlight_default
from graphc.dlight import ScheduleRule


class _Recording(ScheduleRule):
    """Wraps a rule and records the functions it scheduled."""

    def __init__(self, rule, seen):
        self.rule, self.seen = rule, seen

    @property
    def name(self):
        return self.rule.name

    def apply(self, func, target, tunable):
        out = self.rule.apply(func, target, tunable)
        if out is not None:
            self.seen.add(self.rule.name)
        return out


@pytest.fixture
def rules_used(monkeypatch):
    """The names of the default rules that scheduled at least one function."""
    seen = set()
    original = dlight_default.default_rules
    monkeypatch.setattr(dlight_default, "default_rules",
                        lambda target=None: [_Recording(r, seen) for r in original(target)])
    return seen


class MLP(torch.nn.Module):
    """The tutorial MLP (narrower)."""

    def __init__(self):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(64, 32), torch.nn.ReLU(), torch.nn.Linear(32, 10))

    def forward(self, x):
        return torch.softmax(self.net(x), dim=-1)


class CNN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(8)
        self.c2 = torch.nn.Conv2d(8, 8, 3, stride=2)
        self.fc = torch.nn.Linear(8, 5)

    def forward(self, x):
        x = torch.nn.functional.max_pool2d(torch.relu(self.bn(self.c1(x))), 2)
        x = torch.nn.functional.adaptive_avg_pool2d(torch.relu(self.c2(x)), 1).flatten(1)
        return self.fc(x)


class TransformerBlock(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0, batch_first=True)

    def forward(self, x):
        return self.layer(x)


class _FirstOutput(torch.nn.Module):
    """A transformers model returning its last hidden state (a tensor, not a ModelOutput)."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x)[0]


def _hf(name):
    tf = pytest.importorskip("transformers")
    if name == "bert":
        cfg = tf.BertConfig(vocab_size=64, hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                            intermediate_size=64, max_position_embeddings=32)
        return tf.BertModel(cfg), (torch.randint(0, 64, (1, 24)),)  # 24 rows: Matmul, not LowBatchGEMV
    if name == "gpt2":
        cfg = tf.GPT2Config(vocab_size=64, n_embd=32, n_layer=1, n_head=2, n_positions=32)
        return tf.GPT2Model(cfg), (torch.randint(0, 64, (1, 24)),)
    if name == "vit":
        cfg = tf.ViTConfig(image_size=16, patch_size=8, num_channels=3, hidden_size=32, num_hidden_layers=1,
                           num_attention_heads=2, intermediate_size=64)
        return tf.ViTModel(cfg), (torch.randn(1, 3, 16, 16),)
    cfg = tf.ResNetConfig(num_channels=3, embedding_size=8, hidden_sizes=[8, 16], depths=[1, 1],
                          layer_type="basic")
    return tf.ResNetModel(cfg), (torch.randn(1, 3, 32, 32),)


def _model(name):
    torch.manual_seed(0)
    if name == "mlp":
        return MLP(), (torch.randn(4, 64),)
    if name == "cnn":
        return CNN(), (torch.randn(2, 3, 16, 16),)
    if name == "transformer_block":
        return TransformerBlock(), (torch.randn(2, 8, 32),)
    model, inputs = _hf(name)
    return _FirstOutput(model), inputs


_EXPORTED: dict = {}


def _exported(name):
    if name not in _EXPORTED:
        model, inputs = _model(name)
        model = model.eval()
        with torch.no_grad():
            expected = model(*inputs).numpy()
        _EXPORTED[name] = (torch.export.export(model, inputs), inputs, expected)
    return _EXPORTED[name]


MODELS = ["mlp", "cnn", "transformer_block", "bert", "gpt2", "vit", "resnet"]


@pytest.mark.parametrize("name", MODELS)
def test_model_runs_on_opencl_and_matches_torch(name, rules_used):
    dev = opencl_device()
    exported, inputs, expected = _exported(name)
    exe = graphc.compile(exported, target="opencl")
    out = graphc.relax.VirtualMachine(exe, dev)["main"](*[x.numpy() for x in inputs])
    out = out[0] if isinstance(out, tuple) else out
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-4, atol=1e-5)
    if name in ("bert", "gpt2"):
        assert {"Matmul", "GeneralReduction"} <= rules_used, rules_used
    if name in ("transformer_block", "vit"):  # 8 and 5 tokens: linear layers of a few rows
        assert {"LowBatchGEMV", "GeneralReduction"} <= rules_used, rules_used
    if name in ("cnn", "resnet"):
        assert "Conv2d" in rules_used, rules_used


def test_decode_step_uses_gemv(rules_used):
    """A batch-1, one-token linear stack (a decoder's step) goes through GEMV."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.GELU(), torch.nn.Linear(64, 32),
                                torch.nn.LayerNorm(32)).eval()
    x = torch.randn(1, 32)
    exe = graphc.compile(torch.export.export(model, (x,)), target="opencl")
    assert {"GEMV", "Reduction"} <= rules_used or {"GEMV", "GeneralReduction"} <= rules_used, rules_used
    out = graphc.relax.VirtualMachine(exe, opencl_device())["main"](x.numpy())
    out = out[0] if isinstance(out, tuple) else out
    with torch.no_grad():
        np.testing.assert_allclose(out.numpy(), model(x).numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", ["cnn", "transformer_block", "bert"])
def test_model_compiles_to_cubins_without_spills(name):
    from gpu_check import require_nvrtc

    require_nvrtc()
    exported, _, _ = _exported(name)
    for arch in ("sm_80", "sm_90"):
        exe = graphc.compile(exported, target=f"cuda -arch={arch}")
        module = exe.modules["cuda"]
        assert module.imported_modules[0].code.binaries[arch][:4] == b"\x7fELF"
        info = module.imported_modules[0].kernel_info
        spills = [k for k, u in info.items() if u[arch]["spill_stores"] or u[arch]["spill_loads"]]
        assert not spills, spills
        assert all(u[arch]["smem"] <= 48 * 1024 for u in info.values())


def test_layout_change_uses_transpose(rules_used):
    """A model whose output is a permuted activation (channels-last out of channels-first)
    goes through Transpose."""

    class ToChannelsLast(torch.nn.Module):
        def forward(self, x):
            return torch.relu(x).permute(0, 2, 3, 1)

    x = torch.randn(2, 48, 6, 40)
    exe = graphc.compile(torch.export.export(ToChannelsLast().eval(), (x,)), target="opencl")
    assert "Transpose" in rules_used, rules_used
    out = graphc.relax.VirtualMachine(exe, opencl_device())["main"](x.numpy())
    out = out[0] if isinstance(out, tuple) else out
    np.testing.assert_array_equal(out.numpy(), torch.relu(x).permute(0, 2, 3, 1).numpy())
