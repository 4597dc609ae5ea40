"""The importer itself: the tutorial's MLP text, parameters as inputs, dynamic shapes, errors."""

from pathlib import Path

import numpy as np
import pytest
import torch
from torch import nn

from graphc import relax, tir
from graphc.errors import FrontendError, UnsupportedOperatorError
from graphc.frontend import detach_params
from graphc.frontend.torch import from_exported_program

TUTORIAL = Path(__file__).parent.parent / "data" / "ir_module_tutorial"


class TorchModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 256)
        self.relu1 = nn.ReLU()
        self.fc2 = nn.Linear(256, 10)

    def forward(self, x):
        return self.fc2(self.relu1(self.fc1(x)))


def _export(model, *inputs, **kwargs):
    with torch.no_grad():
        return torch.export.export(model.eval(), inputs, **kwargs)


def test_tutorial_import_prints_like_the_tutorial():
    ep = _export(TorchModel(), torch.randn(1, 784))
    mod = from_exported_program(ep, keep_params_as_input=True, unwrap_unit_return_tuple=True)
    mod, params = detach_params(mod)
    assert mod.script() == (TUTORIAL / "from_torch.txt").read_text().rstrip("\n")
    assert [p.shape for p in params["main"]] == [(256, 784), (256,), (10, 256), (10,)]
    assert "params" not in mod["main"].attrs


def test_params_as_inputs_carry_their_values(verify):
    model = TorchModel()
    ep = _export(model, torch.randn(1, 784))
    mod = from_exported_program(ep, keep_params_as_input=True)
    assert mod["main"].attrs["num_input"] == 1
    assert [p.name_hint for p in mod["main"].params] == [
        "x", "p_fc1_weight", "p_fc1_bias", "p_fc2_weight", "p_fc2_bias"]
    _, params = detach_params(mod)
    np.testing.assert_array_equal(params["main"][0].numpy(), model.fc1.weight.detach().numpy())


def test_params_as_constants_by_default():
    mod = from_exported_program(_export(TorchModel(), torch.randn(1, 784)))
    assert [p.name_hint for p in mod["main"].params] == ["x"]
    assert isinstance(mod["main"].body.body.struct_info, relax.TupleStructInfo)


def test_return_tuple_options():
    ep = _export(TorchModel(), torch.randn(1, 784))
    unwrapped = from_exported_program(ep, unwrap_unit_return_tuple=True)
    assert isinstance(unwrapped["main"].body.body.struct_info, relax.TensorStructInfo)
    unbound = from_exported_program(ep, no_bind_return_tuple=True)
    assert isinstance(unbound["main"].body.body, relax.Tuple)


def test_dynamic_batch_is_symbolic_with_its_range(verify):
    batch = torch.export.Dim("batch", min=2, max=64)
    model = nn.Sequential(nn.Linear(4, 3), nn.ReLU())
    mod = verify(model, [torch.randn(4, 4)], dynamic_shapes=({0: batch},),
                 run_inputs=[[torch.randn(n, 4)] for n in (2, 5, 17)])
    (x,) = mod["main"].params
    n = x.struct_info.shape_values[0]
    assert isinstance(n, tir.Var)
    attrs = mod["main"].attrs
    assert attrs["tir_var_lower_bound"] == {n.name: 2}
    assert attrs["tir_var_upper_bound"] == {n.name: 64}


def test_dynamic_view_uses_the_symbolic_size(verify):
    batch = torch.export.Dim("batch", min=1, max=32)
    mod = verify(lambda x: (x.view(-1, 2) * 2, x.shape[0] * x), [torch.randn(4, 2)],
                 dynamic_shapes=(({0: batch},),), run_inputs=[[torch.randn(n, 2)] for n in (1, 3)])
    assert "R.shape([s" in mod.script()


def test_unsupported_operators_are_listed_once_with_counts():
    def fn(x):
        a = torch.special.bessel_j0(x)
        return torch.special.bessel_j0(a) + torch.special.i0(x)

    with pytest.raises(UnsupportedOperatorError) as info:
        from_exported_program(_export(_Fn(fn), torch.randn(3)))
    text = str(info.value)
    assert "2 operator(s)" in text
    assert "aten.special_bessel_j0.default: 2 use(s), first at node 'special_bessel_j0'" in text
    assert "aten.special_i0.default: 1 use(s)" in text or "aten.i0.default: 1 use(s)" in text


def test_an_unsupported_argument_value_is_rejected_loudly():
    sdpa = torch.nn.functional.scaled_dot_product_attention
    q = torch.randn(1, 2, 3, 4)
    ep = _export(_Fn(lambda q: sdpa(q, q, q, dropout_p=0.5)), q)
    with pytest.raises(FrontendError, match=r"dropout_p=0.5 must be 0 \(inference\)"):
        from_exported_program(ep)


def test_training_batch_norm_is_rejected():
    bn = nn.BatchNorm1d(3).train()
    ep = torch.export.export(bn, (torch.randn(4, 3),))
    with pytest.raises((FrontendError, UnsupportedOperatorError)):
        from_exported_program(ep)


class _Fn(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *args):
        return self.fn(*args)


def test_data_dependent_values_are_refused():
    ep = _export(_Fn(lambda x: x * x.sum().item()), torch.randn(3))
    with pytest.raises(FrontendError, match="aten.item.default"):
        from_exported_program(ep)


def test_dynamic_scan_and_sort_of_a_3d_tensor(verify):
    batch = torch.export.Dim("batch", min=1, max=16)
    verify(lambda x: torch.cumsum(x.reshape(-1), 0), [torch.randn(3, 4)], dynamic_shapes=(({0: batch},),),
           run_inputs=[[torch.randn(n, 4)] for n in (1, 5)])
    verify(lambda x: x.median(), [torch.randn(2, 3, 4)])
