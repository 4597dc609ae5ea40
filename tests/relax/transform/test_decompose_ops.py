"""DecomposeOpsForInference/Training: structure, numerics against numpy, func_name, idempotence."""

import numpy as np
import pytest

import graphc
from graphc import relax

CALL_TIR = relax.Op.get("relax.call_tir")


def run(mod, inputs):
    """Evaluate main binding by binding: call_tir kernels built for the CPU, tuples in Python."""
    main = mod["main"]
    env = dict(zip(main.params, inputs))

    def ev(e):
        if isinstance(e, relax.Constant):
            return e.data.numpy()
        if isinstance(e, relax.Tuple):
            return tuple(ev(f) for f in e.fields)
        if isinstance(e, relax.TupleGetItem):
            return ev(e.tuple_value)[e.index]
        if isinstance(e, relax.Call) and e.op is CALL_TIR:
            sinfos = e.sinfo_args[0].fields if isinstance(e.sinfo_args[0], relax.TupleStructInfo) else [
                e.sinfo_args[0]]
            outs = [np.zeros(tuple(int(d) for d in s.shape_values), s.dtype) for s in sinfos]
            args = [np.require(ev(a), requirements="C") for a in e.args[1].fields]
            graphc.build(mod[e.args[0]], target="llvm")["main"](*args, *outs)
            return tuple(outs) if len(sinfos) > 1 else outs[0]
        return env[e]

    for block in main.body.blocks:
        for b in block.bindings:
            env[b.var] = ev(b.value)
    return ev(main.body.body)


def batch_norm_module(shape=(2, 3, 4, 4), axis=1, epsilon=1e-5):
    c = shape[axis]
    x = relax.Var("x", relax.TensorStructInfo(shape, "float32"))
    params = [relax.Var(n, relax.TensorStructInfo((c,), "float32")) for n in ("gamma", "beta", "mean", "var")]
    bb = relax.BlockBuilder()
    with bb.function("main", [x, *params]):
        with bb.dataflow():
            bn = bb.emit(relax.op.nn.batch_norm(x, *params, axis=axis, epsilon=epsilon, training=False))
            out = bb.emit(relax.TupleGetItem(bn, 0))
            gv = bb.emit_output(relax.op.nn.relu(out))
        bb.emit_func_output(gv)
    return bb.get()


def _bn_inputs(shape, axis, seed=0):
    rng = np.random.default_rng(seed)
    c = shape[axis]
    x = rng.normal(size=shape).astype("float32")
    gamma, beta, mean = (rng.normal(size=c).astype("float32") for _ in range(3))
    var = rng.uniform(0.5, 2.0, size=c).astype("float32")
    return [x, gamma, beta, mean, var]


def _bn_reference(x, gamma, beta, mean, var, axis, epsilon):
    shape = [1] * x.ndim
    shape[axis] = -1

    def b(v):
        return v.reshape(shape)

    return np.maximum((x - b(mean)) / np.sqrt(b(var) + epsilon) * b(gamma) + b(beta), 0)


@pytest.mark.parametrize(("shape", "axis"), [((2, 3, 4, 4), 1), ((5, 3), -1), ((6,), 0)])
def test_batch_norm_decomposes_and_matches_numpy(shape, axis):
    mod = batch_norm_module(shape, axis, epsilon=1e-3)
    after = relax.transform.DecomposeOpsForInference()(mod)
    assert relax.analysis.well_formed(after)
    ops = [b.value.op.name for b in after["main"].body.blocks[0].bindings if isinstance(b.value, relax.Call)]
    assert "relax.nn.batch_norm" not in ops and "relax.rsqrt" in ops
    tuples = [b.value for b in after["main"].body.blocks[0].bindings if isinstance(b.value, relax.Tuple)]
    assert len(tuples) == 1 and tuples[0].fields[1] is mod["main"].params[3]  # (out, moving_mean, moving_var)
    again = relax.transform.DecomposeOpsForInference()(after)
    assert again["main"] is after["main"]
    inputs = _bn_inputs(shape, axis % len(shape))
    legalized = relax.transform.LegalizeOps()(after)
    expected = _bn_reference(*inputs, axis=axis % len(shape), epsilon=1e-3)
    np.testing.assert_allclose(run(legalized, inputs), expected, rtol=1e-4, atol=1e-5)
    whole = relax.transform.LegalizeOps()(mod)  # the undecomposed operator agrees too
    np.testing.assert_allclose(run(whole, inputs), expected, rtol=1e-4, atol=1e-5)


def test_layer_norm_stays_for_inference_and_decomposes_for_training():
    x = relax.Var("x", relax.TensorStructInfo((4, 6), "float32"))
    g = relax.Var("g", relax.TensorStructInfo((6,), "float32"))
    b = relax.Var("b", relax.TensorStructInfo((6,), "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x, g, b]):
        with bb.dataflow():
            gv = bb.emit_output(relax.op.nn.layer_norm(x, g, b, axes=[-1], epsilon=1e-5))
        bb.emit_func_output(gv)
    mod = bb.get()
    assert relax.transform.DecomposeOpsForInference()(mod)["main"] is mod["main"]
    after = relax.transform.DecomposeOpsForTraining()(mod)
    assert relax.analysis.well_formed(after)
    ops = [bnd.value.op.name for bnd in after["main"].body.blocks[0].bindings]
    assert {"relax.mean", "relax.variance", "relax.rsqrt"} <= set(ops) and "relax.nn.layer_norm" not in ops
    rng = np.random.default_rng(0)
    inputs = [rng.normal(size=s).astype("float32") for s in [(4, 6), (6,), (6,)]]
    xs, gs, bs = inputs
    mean, var = xs.mean(-1, keepdims=True), xs.var(-1, keepdims=True)
    expected = (xs - mean) / np.sqrt(var + 1e-5) * gs + bs
    out = run(relax.transform.LegalizeOps()(after), inputs)
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-5)


def test_training_batch_norm_uses_batch_statistics_and_updates_the_moving_ones():
    x = relax.Var("x", relax.TensorStructInfo((8, 3), "float32"))
    params = [relax.Var(n, relax.TensorStructInfo((3,), "float32")) for n in ("gamma", "beta", "mean", "var")]
    bb = relax.BlockBuilder()
    with bb.function("main", [x, *params]):
        with bb.dataflow():
            gv = bb.emit_output(relax.op.nn.batch_norm(x, *params, axis=1, epsilon=1e-5))
        bb.emit_func_output(gv)
    after = relax.transform.LegalizeOps()(relax.transform.DecomposeOpsForTraining()(bb.get()))
    inputs = _bn_inputs((8, 3), 1)
    xs, gamma, beta, mm, mv = inputs
    out, new_mean, new_var = run(after, inputs)
    bm, bv = xs.mean(0), xs.var(0)
    np.testing.assert_allclose(out, (xs - bm) / np.sqrt(bv + 1e-5) * gamma + beta, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(new_mean, 0.9 * mm + 0.1 * bm, rtol=1e-5)
    np.testing.assert_allclose(new_var, 0.9 * mv + 0.1 * bv, rtol=1e-5)


def test_func_name_restricts_the_pass():
    mod = batch_norm_module()
    mod["other"] = batch_norm_module()["main"].with_attr("global_symbol", "other")
    after = relax.transform.DecomposeOpsForInference("other")(mod)
    assert after["main"] is mod["main"] and after["other"] is not mod["other"]
    with pytest.raises(ValueError, match="no Relax function 'forward'"):
        relax.transform.DecomposeOpsForInference("forward")(mod)


def test_unknown_rank_is_left_alone():
    x = relax.Var("x", relax.TensorStructInfo(None, "float32", ndim=-1))
    p = relax.Var("p", relax.TensorStructInfo((3,), "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x, p]):
        gv = bb.emit(relax.op.nn.batch_norm(x, p, p, p, p))
        bb.emit_func_output(gv)
    mod = bb.get()
    assert relax.transform.DecomposeOpsForInference()(mod)["main"] is mod["main"]
