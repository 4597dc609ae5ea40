"""graphc.compile's front door: any torch model, recognised by type; results shaped like the
model's (one tensor, tuples, dicts, nested lists, named tuples, ModelOutput-like records), in
the VM, through `exe(x)` and after saving; the declared range of a symbolic size checked on entry;
the PassContext honoured; the porting names (`graphc.transform`)."""

import collections

import numpy as np
import pytest
import torch
from torch import nn

import graphc
from graphc import relax
from graphc.vm import Executable, NamedOutputs, VirtualMachine


class TorchModel(nn.Module):
    """Defined in this file, as a user defines a model in their own script."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 16)
        self.fc2 = nn.Linear(16, 10)

    def forward(self, x):
        return self.fc2(self.fc1(x).relu())


def _np(value):
    return value.numpy() if hasattr(value, "numpy") else value


def test_a_user_defined_module_compiles_and_returns_one_tensor():
    torch.manual_seed(0)
    model = TorchModel().eval()
    exe = graphc.compile(model, target="llvm", example_inputs=(torch.randn(1, 784),))
    x = torch.randn(1, 784)
    out = relax.VirtualMachine(exe, graphc.cpu())["main"](x)
    assert isinstance(out, graphc.runtime.Tensor)
    np.testing.assert_allclose(out.numpy(), model(x).detach().numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(exe(x).numpy(), out.numpy())  # the one-call way


Pair = collections.namedtuple("Pair", "first second")


class Shaped(nn.Module):
    """Returns `kind`: a tuple, a dict, nested lists, a named tuple, a record, or one tensor."""

    def __init__(self, kind):
        super().__init__()
        self.kind = kind

    def forward(self, x):
        a, b, c = x + 1, x * 2, x - 3
        return {
            "tensor": lambda: a,
            "tuple": lambda: (a, b),
            "unit_tuple": lambda: (a,),
            "dict": lambda: {"sum": a, "rest": [b, (c, None)], 7: x},
            "constants": lambda: (a, None, 3),
            "nested_lists": lambda: [[a], [b, [c]]],
            "namedtuple": lambda: Pair(a, b),
        }[self.kind]()


def _expected(kind, x):
    a, b, c = x + 1, x * 2, x - 3
    return {
        "tensor": a,
        "tuple": (a, b),
        "unit_tuple": (a,),
        "dict": {"sum": a, "rest": [b, (c, None)], 7: x},
        "constants": (a, None, 3),
        "nested_lists": [[a], [b, [c]]],
        "namedtuple": Pair(a, b),
    }[kind]


def _assert_same_structure(got, want):
    if isinstance(want, np.ndarray):
        assert isinstance(got, graphc.runtime.Tensor), type(got)
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)
    elif want is None or isinstance(want, int):
        assert got == want
    elif isinstance(want, dict):
        assert type(got) is dict and list(got) == list(want)
        for key in want:
            _assert_same_structure(got[key], want[key])
    else:
        same_fields = hasattr(want, "_fields") and got._fields == want._fields
        assert type(got) is type(want) or same_fields, type(got)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _assert_same_structure(g, w)


@pytest.mark.parametrize("kind", ["tensor", "tuple", "unit_tuple", "dict", "constants", "nested_lists",
                                  "namedtuple"])
def test_outputs_mirror_the_model(kind, tmp_path):
    x = np.arange(6, dtype="float32").reshape(2, 3)
    exe = graphc.compile(Shaped(kind), example_inputs=(torch.from_numpy(x),))
    want = _expected(kind, x)
    _assert_same_structure(VirtualMachine(exe, graphc.cpu())["main"](x), want)
    _assert_same_structure(exe(x), want)
    path = tmp_path / "model.graphc"
    exe.export_library(path)  # the structure is part of the saved executable
    _assert_same_structure(Executable.load(path)(x), want)
    vm = VirtualMachine(exe, graphc.cpu())
    vm.set_input("main", x)
    vm.invoke_stateful("main")
    _assert_same_structure(vm.get_outputs("main"), want)


def test_the_flat_result_stays_available():
    exe = graphc.compile(Shaped("dict"), example_inputs=(torch.ones(2, 3),))
    vm = VirtualMachine(exe, graphc.cpu())
    raw = vm.invoke("main", graphc.runtime.tensor(np.ones((2, 3), "float32")))
    assert isinstance(raw, tuple) and len(raw) == 4  # torch.export's flat order


class MaxOf(nn.Module):
    def forward(self, x):
        return x.max(1)  # a torch.return_types.max: a tuple with field names


def test_torch_return_types_keep_their_field_names():
    x = torch.randn(3, 5)
    out = graphc.compile(MaxOf(), example_inputs=(x,))(x)
    want = x.max(1)
    np.testing.assert_allclose(out.values.numpy(), want.values.numpy())
    np.testing.assert_array_equal(out[1].numpy(), want.indices.numpy())


class WithRecord(nn.Module):
    """Returns a Hugging Face ModelOutput (the record kind of output_structure)."""

    def forward(self, x):
        from transformers.modeling_outputs import BaseModelOutputWithPooling

        return BaseModelOutputWithPooling(last_hidden_state=x * 2, pooler_output=x.sum(-1))


def test_model_output_comes_back_as_named_outputs():
    # imported before tracing: transformers registers ModelOutput classes with torch's pytree
    pytest.importorskip("transformers.modeling_outputs")
    x = torch.randn(2, 3)
    out = graphc.compile(WithRecord(), example_inputs=(x,))(x)
    assert isinstance(out, NamedOutputs) and list(out) == ["last_hidden_state", "pooler_output"]
    np.testing.assert_allclose(out.last_hidden_state.numpy(), (x * 2).numpy(), rtol=1e-6)
    np.testing.assert_allclose(out["pooler_output"].numpy(), x.sum(-1).numpy(), rtol=1e-5)
    assert out[0] is out.last_hidden_state and out.to_tuple()[1] is out.pooler_output
    assert repr(out).startswith("BaseModelOutputWithPooling(last_hidden_state=")


def test_keyword_inputs_and_exported_programs():
    model = Shaped("tuple")
    x = torch.randn(2, 3)
    exe = graphc.compile(model, example_inputs={"x": x})
    a, b = exe(x)
    np.testing.assert_allclose(b.numpy(), (x * 2).numpy())
    ep = torch.export.export(model, (x,))
    assert isinstance(graphc.compile(ep)(x), tuple)


def test_an_unwrapped_import_and_a_default_import_agree():
    from graphc.frontend.torch import from_exported_program

    ep = torch.export.export(Shaped("tensor"), (torch.ones(2, 3),))
    x = np.ones((2, 3), "float32")
    for mod in (from_exported_program(ep), from_exported_program(ep, unwrap_unit_return_tuple=True)):
        np.testing.assert_allclose(graphc.compile(mod)(x).numpy(), x + 1)


def test_inputs_outside_a_declared_range_are_refused_by_name():
    model = nn.Sequential(nn.Linear(4, 3), nn.ReLU()).eval()
    batch = torch.export.Dim("b", max=4096)
    exe = graphc.compile(model, example_inputs=(torch.randn(2, 4),), dynamic_shapes=({0: batch},))
    assert exe(np.ones((4096, 4), "float32")).shape == (4096, 3)
    with pytest.raises(ValueError, match=r"input 'input', dimension 0 \(s\w+\) is 5000, outside its declared "
                                         r"range \[\d, 4096\]"):
        exe(np.ones((5000, 4), "float32"))
    narrow = graphc.compile(model, example_inputs=(torch.randn(4, 4),),
                            dynamic_shapes=({0: torch.export.Dim("b", min=3, max=8)},))
    with pytest.raises(ValueError, match=r"is 2, outside its declared range \[3, 8\]"):
        narrow(np.ones((2, 4), "float32"))


def test_compile_runs_in_the_current_pass_context():
    model = TorchModel().eval()
    example = (torch.randn(1, 784),)
    x = torch.randn(1, 784)
    want = model(x).detach().numpy()

    @graphc.transform.pass_instrument
    class Names:
        def __init__(self):
            self.ran = []

        def run_before_pass(self, mod, info):
            self.ran.append(info.name)

    def compiled(**ctx):
        names = Names()
        with graphc.transform.PassContext(instruments=[names], **ctx):
            exe = graphc.compile(model, example_inputs=example)
        np.testing.assert_allclose(exe(x).numpy(), want, rtol=1e-4, atol=1e-5)
        return [f.name for f in exe.functions if f.kind == "kernel"], names.ran

    kernels, ran = compiled()
    assert any(name.startswith("fused_") for name in kernels)
    assert {"FuseOps", "InlinePermuteIntoConsumers", "ApplyDefaultSchedule", "PromoteReductionAccumulator",
            "VMShapeLower"} <= set(ran)
    kernels, ran = compiled(disabled_pass=["FuseOps", "InlinePermuteIntoConsumers"])
    assert not any(name.startswith("fused_") for name in kernels)
    assert "FuseOps" not in ran and "InlinePermuteIntoConsumers" not in ran
    _, ran = compiled(opt_level=0)  # the opt_level 1 lowering passes are skipped
    assert "PromoteReductionAccumulator" not in ran and "FlattenBuffer" in ran


def test_porting_names():
    assert graphc.transform.PassContext is graphc.ir.transform.PassContext
    assert graphc.transform.Sequential is graphc.ir.transform.Sequential
    assert graphc.transform.module_pass is graphc.ir.transform.module_pass
    assert relax.frontend.detach_params is graphc.frontend.detach_params


def test_compile_stops_at_any_stage():
    from graphc.driver import STAGES, compile_to

    model, example = Shaped("tuple"), (torch.ones(2, 3),)
    results = {stage: compile_to(model, stage, example_inputs=example) for stage in STAGES}
    assert isinstance(results["bytecode"], Executable)
    names = {stage: sorted(gv.name_hint for gv in mod.get_global_vars())
             for stage, mod in results.items() if stage != "bytecode"}
    assert names["imported"] == ["main"]
    assert {"add", "multiply"} <= set(names["legalized"])
    assert not results["fused"]["main"].attrs.get("tir.is_scheduled")
    scheduled = results["scheduled"]
    assert all(scheduled[n].attrs.get("tir.is_scheduled") for n in names["scheduled"] if n != "main")
    assert "vm.builtin.check_tensor_info" in results["lowered"]["main"].script()
    with pytest.raises(ValueError, match="unknown stage 'optimized'"):
        compile_to(model, "optimized", example_inputs=example)
