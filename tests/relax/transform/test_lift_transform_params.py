"""LiftTransformParams: weight-only computations move into <name>_transform_params."""

import numpy as np

import graphc
from graphc import relax
from graphc.relax.transform import LiftTransformParams


def _module():
    x = relax.Var("x", relax.TensorStructInfo((2, 3), "float32"))
    w = relax.Var("w", relax.TensorStructInfo((4, 3), "float32"))
    b = relax.Var("b", relax.TensorStructInfo((4,), "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x, w, b], attrs={"num_input": 1}):
        with bb.dataflow():
            wt = bb.emit(relax.op.permute_dims(w), "wt")  # weight only: lifted
            y = bb.emit(relax.op.matmul(x, wt))
            gv = bb.emit_output(relax.op.add(y, b))  # reads the weight b directly
        bb.emit_func_output(gv)
    return bb.get()


def test_weight_only_bindings_move_and_main_takes_their_results():
    mod = LiftTransformParams()(_module())
    main, transform = mod["main"], mod["main_transform_params"]
    assert [p.name_hint for p in main.params] == ["x", "wt", "b"]
    assert main.attrs["num_input"] == 1
    assert [p.name_hint for p in transform.params] == ["w", "b"]
    assert "permute_dims" in transform.script() and "permute_dims" not in main.script()
    assert relax.analysis.well_formed(mod)


def test_running_the_lifted_module_gives_the_same_results():
    rng = np.random.default_rng(0)
    x, w, b = (rng.standard_normal(s).astype("float32") for s in [(2, 3), (4, 3), (4,)])
    before = relax.VirtualMachine(relax.build(relax.get_pipeline("zero")(_module()), "llvm"), graphc.cpu())
    lifted = LiftTransformParams()(relax.get_pipeline("zero")(_module()))
    after = relax.VirtualMachine(relax.build(lifted, "llvm"), graphc.cpu())
    params = after["main_transform_params"](w, b)
    np.testing.assert_array_equal(after["main"](x, *params).numpy(), before["main"](x, w, b).numpy())


def test_functions_without_num_input_or_without_weight_work_are_unchanged():
    mod = _module()
    main = mod["main"]
    mod["main"] = main.without_attr("num_input")
    assert LiftTransformParams()(mod) is mod
    inputs_only = _module()
    inputs_only["main"] = inputs_only["main"].with_attr("num_input", 3)
    assert LiftTransformParams()(inputs_only) is inputs_only
