"""The relax.frontend.nn layers TVM code uses, exported and run against PyTorch or numpy; TVM's
debug export (the `_io` effect object) and tuple inputs."""

import math

import numpy as np
import pytest
import torch

import graphc
from graphc import relax
from graphc.relax.frontend import nn

F = torch.nn.functional


def run(module, inputs: dict, seed=0):
    """Export `module`'s forward for numpy `inputs`, run it with random parameters: (outputs, params)."""
    spec = {name: nn.spec.Tensor(a.shape, str(a.dtype)) for name, a in inputs.items()}
    mod, params = module.export_tvm({"forward": spec})
    rng = np.random.default_rng(seed)
    values = [rng.uniform(-0.5, 0.5, [int(d) for d in p.shape]).astype(p.dtype) for _, p in params]
    vm = relax.VirtualMachine(graphc.compile(mod, target="llvm"), graphc.cpu())
    out = vm["forward"](*inputs.values(), *values)
    return out, dict(zip([n for n, _ in params], [torch.from_numpy(v) for v in values]))


def x_of(shape, seed=1):
    return np.random.default_rng(seed).standard_normal(shape).astype("float32")


@pytest.mark.parametrize("layer,fn,shape", [
    (lambda: nn.Conv1D(3, 4, 3, stride=2, padding=1), F.conv1d, (2, 3, 9)),
    (lambda: nn.Conv3D(2, 4, 2, padding=1, groups=2), F.conv3d, (1, 2, 4, 5, 3)),
    (lambda: nn.ConvTranspose1D(3, 4, 3, stride=2), F.conv_transpose1d, (2, 3, 5)),
])
def test_convolutions_match_torch(layer, fn, shape):
    module = layer()
    x = x_of(shape)
    out, p = run(module, {"x": x})
    kwargs = {"stride": module.stride, "padding": module.padding}
    if module.groups != 1:
        kwargs["groups"] = module.groups
    ref = fn(torch.from_numpy(x), p["weight"], p["bias"], **kwargs)
    np.testing.assert_allclose(out.numpy(), ref.numpy(), rtol=1e-4, atol=1e-5)


def test_norms_and_identity_match_torch():
    x = x_of((2, 4, 6))
    out, p = run(nn.GroupNorm(2, 4), {"x": x})
    ref = F.group_norm(torch.from_numpy(x), 2, p["weight"], p["bias"])
    np.testing.assert_allclose(out.numpy(), ref.numpy(), rtol=1e-4, atol=1e-5)
    out, p = run(nn.RMSNorm(6, [2], bias=True), {"x": x})
    t = torch.from_numpy(x)
    ref = t / torch.sqrt((t * t).mean(-1, keepdim=True) + 1e-5) * p["weight"] + p["bias"]
    np.testing.assert_allclose(out.numpy(), ref.numpy(), rtol=1e-4, atol=1e-5)
    out, _ = run(nn.Identity(), {"x": x})
    np.testing.assert_array_equal(out.numpy(), x)


def test_module_list_and_dict_name_and_chain_their_layers():
    class Net(nn.Module):
        def __init__(self):
            self.layers = nn.ModuleList([nn.Linear(4, 4, bias=False), nn.ReLU(), nn.Linear(4, 2)])
            self.heads = nn.ModuleDict({"a": nn.Linear(2, 1, bias=False)})

        def forward(self, x):
            return self.heads["a"](self.layers(x))

    net = Net()
    assert [n for n, _ in net.named_parameters()] == ["layers.0.weight", "layers.2.weight", "layers.2.bias",
                                                      "heads.a.weight"]
    assert len(net.layers) == 3 and list(net.heads) == ["a"]
    x = x_of((3, 4))
    out, p = run(net, {"x": x})
    h = F.relu(torch.from_numpy(x) @ p["layers_0_weight"].T) @ p["layers_2_weight"].T + p["layers_2_bias"]
    np.testing.assert_allclose(out.numpy(), (h @ p["heads_a_weight"].T).numpy(), rtol=1e-4, atol=1e-5)


def test_attention_matches_torch():
    hidden, context = x_of((2, 6, 8)), x_of((2, 5, 12), seed=2)
    module = nn.Attention(query_dim=8, cross_attention_dim=12, heads=2, dim_head=4, norm_num_groups=2)
    out, p = run(module, {"hidden_states": hidden, "encoder_hidden_states": context})
    h = torch.from_numpy(hidden)
    h = F.group_norm(h.transpose(1, 2), 2, p["group_norm_weight"], p["group_norm_bias"]).transpose(1, 2)
    q = (h @ p["to_q_weight"].T).reshape(2, 6, 2, 4).transpose(1, 2)
    c = torch.from_numpy(context)
    k = (c @ p["to_k_weight"].T).reshape(2, 5, 2, 4).transpose(1, 2)
    v = (c @ p["to_v_weight"].T).reshape(2, 5, 2, 4).transpose(1, 2)
    att = F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(2, 6, 8)
    ref = att @ p["to_out_0_weight"].T + p["to_out_0_bias"]
    np.testing.assert_allclose(out.numpy(), ref.numpy(), rtol=1e-4, atol=1e-5)


def test_timesteps_and_timestep_embedding():
    t = np.array([0.0, 1.0, 250.0], dtype="float32")
    out, _ = run(nn.Timesteps(10), {"x": t})
    freqs = np.exp(-math.log(10000) * np.arange(5, dtype="float32") / 4)
    arg = t[:, None] * freqs[None, :]
    np.testing.assert_allclose(out.numpy(), np.concatenate([np.sin(arg), np.cos(arg)], -1), rtol=1e-4,
                               atol=1e-4)
    sample, cond = x_of((3, 8)), x_of((3, 5), seed=3)
    out, p = run(nn.TimestepEmbedding(8, 16, cond_proj_dim=5), {"sample": sample, "condition": cond})
    s = torch.from_numpy(sample) + torch.from_numpy(cond) @ p["cond_proj_weight"].T
    s = F.silu(s @ p["linear_1_weight"].T + p["linear_1_bias"])
    ref = s @ p["linear_2_weight"].T + p["linear_2_bias"]
    np.testing.assert_allclose(out.numpy(), ref.numpy(), rtol=1e-4, atol=1e-5)


def test_debug_export_threads_the_effect_object():
    class Pair(nn.Module):
        def forward(self, xs):
            return [nn.add(xs[0], xs[1]), nn.subtract(xs[0], xs[1])]

    spec = {"forward": {"xs": [nn.spec.Tensor((2, 3)), nn.spec.Tensor((2, 3))]}}
    mod, _ = Pair().export_tvm(spec, debug=True)
    func = mod["forward"]
    assert [p.name_hint for p in func.params] == ["xs", "_io"] and func.attrs["num_input"] == 2
    assert repr(func.ret_struct_info) == ('R.Tuple(R.Tuple(R.Tensor((2, 3), dtype="float32"), '
                                          'R.Tensor((2, 3), dtype="float32")), R.Tuple(R.Object))')
    plain, _ = Pair().export_tvm(spec)
    assert [p.name_hint for p in plain["forward"].params] == ["xs"]
    a, b = x_of((2, 3)), x_of((2, 3), seed=4)
    vm = relax.VirtualMachine(graphc.compile(plain, target="llvm"), graphc.cpu())
    s, d = vm["forward"]((a, b))
    np.testing.assert_allclose(s.numpy(), a + b, rtol=1e-6)
    np.testing.assert_allclose(d.numpy(), a - b, rtol=1e-6)
