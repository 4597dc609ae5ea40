"""relax.get_pipeline: the "zero" pipeline's passes, numerics on the tutorial's MLP, idempotence."""

import numpy as np
import pytest

import graphc
from graphc import relax, tir
from graphc.ir.instrument import PassTimingInstrument
from graphc.ir.structural import structural_equal
from graphc.ir.transform import PassContext, Sequential

ZERO = ["LegalizeOps", "AnnotateTIROpPattern", "FoldConstant", "FuseOps", "FuseTIR"]


def test_unknown_pipeline_names_the_available_ones():
    with pytest.raises(ValueError, match="unknown pipeline 'O3'; available pipelines: zero"):
        relax.get_pipeline("O3")


def test_zero_pipeline_is_the_tutorials_sequence():
    pipeline = relax.get_pipeline()
    assert isinstance(pipeline, Sequential)
    assert pipeline.info.name == "zero_pipeline"
    assert [p.info.name for p in pipeline.passes] == ZERO


def mlp(batch=1):
    x = relax.Var("x", relax.TensorStructInfo((batch, 8), "float32"))
    w0 = relax.Var("w0", relax.TensorStructInfo((16, 8), "float32"))
    b0 = relax.Var("b0", relax.TensorStructInfo((16,), "float32"))
    w1 = relax.Var("w1", relax.TensorStructInfo((4, 16), "float32"))
    b1 = relax.Var("b1", relax.TensorStructInfo((4,), "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x, w0, b0, w1, b1], attrs={"num_input": 1}):
        with bb.dataflow():
            lv = bb.emit(relax.op.permute_dims(w0))
            lv1 = bb.emit(relax.op.matmul(x, lv))
            lv2 = bb.emit(relax.op.add(lv1, b0))
            lv3 = bb.emit(relax.op.nn.relu(lv2))
            lv4 = bb.emit(relax.op.permute_dims(w1))
            lv5 = bb.emit(relax.op.matmul(lv3, lv4))
            gv = bb.emit_output(relax.op.add(lv5, b1))
        bb.emit_func_output(gv)
    return bb.get()


def run_by_hand(mod, inputs):
    """Run main's bindings (call_tir of PrimFuncs, constants, aliases) with numpy arrays."""
    call_tir = relax.Op.get("relax.call_tir")
    values = dict(zip(mod["main"].params, inputs))

    def value(e):
        return e.data.numpy() if isinstance(e, relax.Constant) else values[e]

    for block in mod["main"].body.blocks:
        for b in block.bindings:
            v = b.value
            if isinstance(v, relax.Call) and v.op is call_tir:
                shape = tuple(int(d) for d in v.sinfo_args[0].shape_values)
                out = np.zeros(shape, v.sinfo_args[0].dtype)
                args = [np.require(value(a), requirements="C") for a in v.args[1].fields]
                graphc.build(mod[v.args[0]], target="llvm")["main"](*args, out)
                values[b.var] = out
            else:
                values[b.var] = value(v)
    return value(mod["main"].body.body)


def _weights():
    rng = np.random.default_rng(0)
    return [rng.normal(size=s).astype("float32") for s in [(16, 8), (16,), (4, 16), (4,)]]


def _reference(x, w0, b0, w1, b1):
    return np.maximum(x @ w0.T + b0, 0) @ w1.T + b1


def test_zero_pipeline_keeps_the_numerics_and_folds_the_weight_transposes():
    weights = _weights()
    mod = relax.transform.BindParams("main", dict(zip(["w0", "b0", "w1", "b1"], weights)))(mlp())
    timing = PassTimingInstrument()
    with PassContext(instruments=[timing]):
        after = relax.get_pipeline("zero")(mod)
    assert relax.analysis.well_formed(after)
    assert [name for name, depth, _ in timing.timings] == ["zero_pipeline", *ZERO]  # kernels built quietly
    assert not any("transpose" in gv.name_hint for gv in after.get_global_vars())
    x = np.random.default_rng(1).normal(size=(1, 8)).astype("float32")
    np.testing.assert_allclose(run_by_hand(after, [x]), _reference(x, *weights), rtol=1e-5, atol=1e-5)


def _without_op_patterns(mod):
    out = mod.copy()
    for gv, func in mod.items():
        if not isinstance(func, relax.Function) and "op_pattern" in func.attrs:
            out[gv] = func.without_attr("op_pattern")
    return out


def test_running_the_zero_pipeline_twice_is_harmless():
    once = relax.get_pipeline("zero")(mlp())
    twice = relax.get_pipeline("zero")(once)
    assert relax.analysis.well_formed(twice)
    # the second run may only annotate the fused PrimFuncs with their pattern (TVM does too)
    assert structural_equal(_without_op_patterns(once), _without_op_patterns(twice))
    assert structural_equal(relax.get_pipeline("zero")(twice), twice)
    x = np.ones((1, 8), "float32")
    weights = _weights()
    out = run_by_hand(twice, [x, *weights])
    np.testing.assert_allclose(out, _reference(x, *weights), rtol=1e-5, atol=1e-5)


def test_symbolic_batch_survives_legalize_and_fold():
    n = tir.Var("n", "int64")
    mod = relax.transform.BindParams("main", dict(zip(["w0", "b0", "w1", "b1"], _weights())))(mlp(n))
    after = relax.transform.FoldConstant()(relax.transform.LegalizeOps()(mod))
    assert relax.analysis.well_formed(after)
    assert repr(after["main"].ret_struct_info) == 'R.Tensor((n, 4), dtype="float32")'


MY_PASSES = [
    lambda: relax.transform.FoldConstant(),
    lambda: relax.transform.DeadCodeElimination(),
    lambda: relax.transform.CanonicalizeBindings(),
    lambda: relax.transform.EliminateCommonSubexpr(),
    lambda: relax.transform.ConvertToDataflow(),
    lambda: relax.transform.DecomposeOpsForInference(),
]


def _stages():
    weights = dict(zip(["w0", "b0", "w1", "b1"], _weights()))
    stages = [mlp(), relax.transform.BindParams("main", weights)(mlp(tir.Var("n", "int64")))]
    stages.append(relax.transform.LegalizeOps()(stages[1]))
    stages.append(relax.get_pipeline("zero")(stages[0]))
    return stages


@pytest.mark.parametrize("make_pass", MY_PASSES)
def test_passes_accept_every_stage_and_are_idempotent(make_pass):
    for mod in _stages():
        once = make_pass()(mod)
        assert relax.analysis.well_formed(once), make_pass().info.name
        twice = make_pass()(once)
        assert all(twice[gv] is once[gv] for gv in once.get_global_vars()), make_pass().info.name
