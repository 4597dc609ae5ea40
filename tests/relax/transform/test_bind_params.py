"""BindParams: parameters become constants, symbolic sizes are bound, bad values are rejected."""

import numpy as np
import pytest

import graphc
from graphc import relax, tir
from graphc.ir.structural import assert_structural_equal
from graphc.script import ir as I
from graphc.script import relax as R
from graphc.script import tir as T


@I.ir_module
class Linear:
    @R.function
    def main(x: R.Tensor(("n", 4), "float32"), w: R.Tensor(("m", 4), "float32"),
             b: R.Tensor(("m",), "float32")) -> R.Tensor(("n", "m"), "float32"):
        n = T.int64()
        m = T.int64()
        with R.dataflow():
            lv0 = R.permute_dims(w)
            lv1: R.Tensor((n, m), "float32") = R.matmul(x, lv0)
            gv = R.add(lv1, b)
            R.output(gv)
        return gv


W = np.arange(12, dtype="float32").reshape(3, 4)
B = np.ones(3, "float32")


def test_bound_parameters_become_constants_and_symbolic_sizes_are_bound():
    after = relax.transform.BindParams("main", {"w": W, "b": graphc.runtime.tensor(B)})(Linear)
    assert relax.analysis.well_formed(after)
    main = after["main"]
    assert [p.name_hint for p in main.params] == ["x"]
    assert repr(main.ret_struct_info) == 'R.Tensor((n, 3), dtype="float32")'
    lv0, lv1, gv = (b.value for b in main.body.blocks[0].bindings)
    np.testing.assert_array_equal(lv0.args[0].data.numpy(), W)
    np.testing.assert_array_equal(gv.args[1].data.numpy(), B)
    assert repr(main.body.blocks[0].bindings[1].var.struct_info) == 'R.Tensor((n, 3), dtype="float32")'


@I.ir_module
class LinearExpected:
    @R.function
    def main(x: R.Tensor(("n", 4), "float32"), w: R.Tensor((3, 4), "float32"),
             b: R.Tensor((3,), "float32")) -> R.Tensor(("n", 3), "float32"):
        n = T.int64()
        with R.dataflow():
            lv0 = R.permute_dims(w)
            lv1: R.Tensor((n, 3), "float32") = R.matmul(x, lv0)
            gv = R.add(lv1, b)
            R.output(gv)
        return gv


def test_binding_matches_binding_the_expected_module():
    after = relax.transform.BindParams("main", {"w": W, "b": B})(Linear)
    expected = relax.transform.BindParams("main", {"w": W, "b": B})(LinearExpected)
    assert_structural_equal(after, expected)


def test_params_may_be_given_as_vars_and_the_rest_is_unchanged():
    w = Linear["main"].params[1]
    after = relax.transform.BindParams("main", {w: W})(Linear)
    assert [p.name_hint for p in after["main"].params] == ["x", "b"]
    assert repr(after["main"].params[1].struct_info) == 'R.Tensor((3,), dtype="float32")'
    assert relax.transform.BindParams("main", {})(Linear)["main"] is Linear["main"]


def test_the_bound_module_runs_like_numpy():
    mod = relax.transform.BindParams("main", {"w": W, "b": B})(Linear)
    mod = relax.transform.FoldConstant()(relax.transform.LegalizeOps()(mod))
    x = np.random.default_rng(0).normal(size=(2, 4)).astype("float32")
    # the transpose of the bound weight was folded: run the two remaining kernels by hand
    bindings = mod["main"].body.blocks[0].bindings
    assert len(bindings) == 2
    mm, add = (b.value for b in bindings)
    t = np.zeros((2, 3), "float32")
    graphc.build(mod[mm.args[0]], target="llvm")["main"](x, mm.args[1].fields[1].data.numpy(), t)
    out = np.zeros((2, 3), "float32")
    graphc.build(mod[add.args[0]], target="llvm")["main"](t, add.args[1].fields[1].data.numpy(), out)
    np.testing.assert_allclose(out, x @ W.T + B, rtol=1e-5)


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"v": W}, r"function 'main' has no parameter named 'v' \(its parameters: x, w, b\)"),
        ({"w": W.astype("float16")}, r"parameter 'w' of function 'main' expects dtype float32, got .*16"),
        ({"w": W.reshape(12)}, r"parameter 'w' of function 'main' expects a tensor of rank 2"),
        ({"w": W[:, :3]}, r"parameter 'w' of function 'main' expects shape .*\(axis 1: 4 != 3\)"),
        ({"w": W, "b": np.ones(5, "float32")}, r"parameter 'b' .*symbolic dimension m is 3 .* but 5 here"),
        ({"w": [1, 2]}, r"parameter 'w' is bound to a list"),
    ],
)
def test_bad_values_name_the_parameter(params, message):
    with pytest.raises((ValueError, TypeError), match=message):
        relax.transform.BindParams("main", params)(Linear)


def test_unknown_function_is_an_error():
    with pytest.raises(ValueError, match="no Relax function 'forward'"):
        relax.transform.BindParams("forward", {"w": W})(Linear)


def test_symbolic_sizes_reach_call_tir_outputs_and_shapes():
    n = tir.Var("n", "int64")
    x = relax.Var("x", relax.TensorStructInfo((n,), "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            lv = bb.emit(relax.op.reshape(x, relax.ShapeExpr([n, 1])))
            gv = bb.emit_output(relax.op.nn.relu(lv))
        bb.emit_func_output(gv)
    mod = relax.transform.LegalizeOps()(bb.get())
    after = relax.transform.BindParams("main", {"x": np.ones(5, "float32")})(mod)
    assert relax.analysis.well_formed(after)
    calls = [b.value for b in after["main"].body.blocks[0].bindings]
    assert all(repr(c.sinfo_args[0]) == 'R.Tensor((5, 1), dtype="float32")' for c in calls)


def test_torch_tensors_bind_too():
    torch = pytest.importorskip("torch")
    w = torch.tensor(W, requires_grad=True)
    after = relax.transform.BindParams("main", {"w": w, "b": torch.tensor(B)})(Linear)
    lv0 = after["main"].body.blocks[0].bindings[0].value
    np.testing.assert_array_equal(lv0.args[0].data.numpy(), W)


def test_binding_an_input_updates_num_input():
    mod = Linear.copy()
    mod["main"] = Linear["main"].with_attr("num_input", 1)
    after = relax.transform.BindParams("main", {"w": W})(mod)
    assert after["main"].attrs["num_input"] == 1
    x = np.ones((2, 4), "float32")
    after = relax.transform.BindParams("main", {"x": x})(mod)
    assert after["main"].attrs["num_input"] == 0
    assert repr(after["main"].ret_struct_info) == 'R.Tensor((2, m), dtype="float32")'
