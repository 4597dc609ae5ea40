"""LegalizeOps on the tutorial's MLP: PrimFunc names, numerics, skip/custom maps, idempotence."""

import numpy as np
import pytest

import graphc
from graphc import relax, tir, topi
from graphc.ir import structural_equal

R = relax
CALL_TIR = R.Op.get("relax.call_tir")


def mlp(batch=2):
    """linear(8 -> 16) -> relu -> linear(16 -> 4), written as the tutorial's ops."""
    x = R.Var("x", R.TensorStructInfo((batch, 8), "float32"))
    w0, b0 = (
        R.Var("w0", R.TensorStructInfo((16, 8), "float32")),
        R.Var("b0", R.TensorStructInfo((16,), "float32")),
    )
    w1, b1 = (
        R.Var("w1", R.TensorStructInfo((4, 16), "float32")),
        R.Var("b1", R.TensorStructInfo((4,), "float32")),
    )
    bb = R.BlockBuilder()
    with bb.function("main", [x, w0, b0, w1, b1]):
        with bb.dataflow():
            lv = bb.emit(R.op.permute_dims(w0))
            lv1 = bb.emit(R.op.matmul(x, lv))
            lv2 = bb.emit(R.op.add(lv1, b0))
            lv3 = bb.emit(R.op.nn.relu(lv2))
            lv4 = bb.emit(R.op.permute_dims(w1))
            lv5 = bb.emit(R.op.matmul(lv3, lv4))
            gv = bb.emit_output(R.op.add(lv5, b1))
        bb.emit_func_output(gv)
    return bb.get()


def _calls(mod):
    return [b.value for block in mod["main"].body.blocks for b in block.bindings]


def _weights(batch):
    rng = np.random.default_rng(0)
    shapes = [(batch, 8), (16, 8), (16,), (4, 16), (4,)]
    return [rng.normal(size=s).astype("float32") for s in shapes]


def _run_by_hand(mod, arrays, env_of=None):
    """Run main's call_tir bindings one by one, each PrimFunc built separately."""
    values = dict(zip(mod["main"].params, arrays))
    for block in mod["main"].body.blocks:
        for binding in block.bindings:
            call = binding.value
            assert call.op is CALL_TIR
            args = [values[a] for a in call.args[1].fields]
            shape = tuple(
                int(d) if isinstance(d, tir.IntImm) else env_of(d) for d in call.sinfo_args[0].shape_values
            )
            out = np.zeros(shape, call.sinfo_args[0].dtype)
            graphc.build(mod[call.args[0]], target="llvm")["main"](*args, out)
            values[binding.var] = out
    return values[mod["main"].body.body]


def _reference(x, w0, b0, w1, b1):
    return np.maximum(x @ w0.T + b0, 0) @ w1.T + b1


def test_mlp_prim_func_names_and_numerics():
    mod = R.transform.LegalizeOps()(mlp())
    assert R.analysis.well_formed(mod)
    names = [c.args[0].name_hint for c in _calls(mod)]
    assert names == ["transpose", "matmul", "add", "relu", "transpose1", "matmul1", "add1"]
    assert all(c.op is CALL_TIR for c in _calls(mod))
    assert sorted(gv.name_hint for gv in mod.get_global_vars()) == sorted(names + ["main"])
    arrays = _weights(2)
    np.testing.assert_allclose(_run_by_hand(mod, arrays), _reference(*arrays), rtol=1e-5, atol=1e-5)


def test_mlp_with_symbolic_batch():
    n = tir.Var("n", "int64")
    mod = R.transform.LegalizeOps()(mlp(n))
    arrays = _weights(3)
    out = _run_by_hand(mod, arrays, env_of=lambda d: 3)
    assert repr(mod["main"].body.body.struct_info) == 'R.Tensor((n, 4), dtype="float32")'
    np.testing.assert_allclose(out, _reference(*arrays), rtol=1e-5, atol=1e-5)


def test_running_twice_changes_nothing():
    once = R.transform.LegalizeOps()(mlp())
    twice = R.transform.LegalizeOps()(once)
    assert structural_equal(once, twice)
    assert twice["main"] is once["main"]


def test_skip_ops_and_ops_without_legalization_stay():
    plain = R.op.register_op(
        "test.no_legalize", 1, lambda call, bb: call.args[0].struct_info, pattern=R.OpPatternKind.kElemWise
    )
    x = R.Var("x", R.TensorStructInfo((2, 3), "float32"))
    bb = R.BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            lv = bb.emit(R.Call(plain, [x]))
            lv1 = bb.emit(R.op.nn.relu(lv))
            gv = bb.emit_output(R.op.exp(lv1))
        bb.emit_func_output(gv)
    mod = R.transform.LegalizeOps(skip_ops=["relax.nn.relu"])(bb.get())
    ops = [c.op.name for c in _calls(mod)]
    assert ops == ["test.no_legalize", "relax.nn.relu", "relax.call_tir"]
    assert _calls(mod)[2].args[0].name_hint == "tir_exp"
    assert R.analysis.well_formed(mod)


def test_customize_legalize_map_overrides_the_registry():
    def my_add(bb, call):
        return bb.call_te(topi.subtract, *call.args, primfunc_name_hint="my_add")

    mod = R.transform.LegalizeOps(customize_legalize_map={"relax.add": my_add})(mlp())
    names = [c.args[0].name_hint for c in _calls(mod)]
    assert names == ["transpose", "matmul", "my_add", "relu", "transpose1", "matmul1", "my_add1"]
    x, w0, b0, w1, b1 = arrays = _weights(2)
    ref = np.maximum(x @ w0.T - b0, 0) @ w1.T - b1
    np.testing.assert_allclose(_run_by_hand(mod, arrays), ref, rtol=1e-5, atol=1e-5)


def test_calls_with_unknown_shapes_are_kept():
    x = R.Var("x", R.TensorStructInfo(dtype="float32", ndim=2))
    bb = R.BlockBuilder()
    with bb.function("main", [x]):
        gv = bb.emit(R.op.nn.relu(x))
        bb.emit_func_output(gv)
    mod = R.transform.LegalizeOps()(bb.get())
    assert _calls(mod)[0].op.name == "relax.nn.relu" and len(mod.get_global_vars()) == 1


@pytest.mark.parametrize("out_dtype", [None, "float64"])
def test_matmul_batched_broadcast_out_dtype(out_dtype):
    n = tir.Var("n", "int64")
    a = R.Var("a", R.TensorStructInfo((n, 1, 3, 4), "float32"))
    b = R.Var("b", R.TensorStructInfo((2, 4, 5), "float32"))
    bb = R.BlockBuilder()
    with bb.function("main", [a, b]):
        gv = bb.emit(R.op.matmul(a, b, out_dtype=out_dtype))
        bb.emit_func_output(gv)
    mod = R.transform.LegalizeOps()(bb.get())
    rng = np.random.default_rng(1)
    x, y = rng.normal(size=(3, 1, 3, 4)).astype("float32"), rng.normal(size=(2, 4, 5)).astype("float32")
    out = _run_by_hand(mod, [x, y], env_of=lambda d: 3)
    assert out.dtype == np.dtype(out_dtype or "float32") and out.shape == (3, 2, 3, 5)
    np.testing.assert_allclose(out, x.astype("float64") @ y, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("sa,sb", [((4,), (4, 5)), ((3, 4), (4,)), ((4,), (4,)), ((2, 3, 4), (4, 5))])
def test_matmul_vector_operands(sa, sb):
    a, b = R.Var("a", R.TensorStructInfo(sa, "float32")), R.Var("b", R.TensorStructInfo(sb, "float32"))
    bb = R.BlockBuilder()
    with bb.function("main", [a, b]):
        bb.emit_func_output(bb.emit(R.op.matmul(a, b)))
    mod = R.transform.LegalizeOps()(bb.get())
    rng = np.random.default_rng(2)
    x, y = rng.normal(size=sa).astype("float32"), rng.normal(size=sb).astype("float32")
    np.testing.assert_allclose(_run_by_hand(mod, [x, y]), x @ y, rtol=1e-5, atol=1e-5)


LEGALIZED = """
abs add arange argmax argmin astype bitwise_and bitwise_not bitwise_or bitwise_xor broadcast_to ceil
clip concat cos divide equal erf exp expand_dims flatten flip floor floor_divide floor_mod full
full_like greater greater_equal isfinite isinf isnan less less_equal log logical_and logical_not
logical_or logical_xor matmul max maximum mean min minimum mod multiply negative nn.batch_norm
nn.dropout nn.elu nn.gelu nn.gelu_tanh nn.hardsigmoid nn.hardswish nn.layer_norm nn.leakyrelu
nn.log_softmax nn.relu nn.rms_norm nn.selu nn.silu nn.softmax nn.softplus not_equal ones ones_like
permute_dims power prod repeat reshape round rsqrt sigmoid sign sin split sqrt square squeeze stack
std strided_slice subtract sum take tan tanh tile tril triu variance where zeros zeros_like
""".split()


def test_every_library_operator_has_a_legalization_and_a_pattern():
    for name in LEGALIZED:
        op = R.Op.get(f"relax.{name}")
        assert op.get_attr("FLegalize") is not None, name
        assert op.pattern in R.OpPatternKind, name
    assert R.Op.get("relax.call_tir").get_attr("FLegalize") is None


def test_tuple_valued_arguments_are_unpacked():
    x = R.Var("x", R.TensorStructInfo((2, 6), "float32"))
    bb = R.BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            parts = bb.emit(R.op.split(x, 3, axis=1))
            gv = bb.emit_output(R.op.concat(parts, axis=0))
        bb.emit_func_output(gv)
    mod = R.transform.LegalizeOps()(bb.get())
    assert R.analysis.well_formed(mod)
    calls = [c for c in _calls(mod) if isinstance(c, R.Call)]
    assert [c.args[0].name_hint for c in calls] == ["split", "concatenate"]
    a = np.arange(12, dtype="float32").reshape(2, 6)
    split = graphc.build(mod["split"], target="llvm")["main"]
    pieces = [np.zeros((2, 2), "float32") for _ in range(3)]
    split(a, *pieces)
    out = np.zeros((6, 2), "float32")
    graphc.build(mod["concatenate"], target="llvm")["main"](*pieces, out)
    np.testing.assert_array_equal(out, np.concatenate(np.split(a, 3, axis=1), axis=0))


def test_index_checks_name_the_call_and_its_source():
    x = R.Var("x", R.TensorStructInfo((5, 3), "float32"))
    i = R.Var("ids", R.TensorStructInfo((2,), "int64"))
    bb = R.BlockBuilder()
    with bb.function("main", [x, i]):
        with bb.dataflow():
            call = R.op.take(x, i, axis=0, mode="nonnegative")
            call = call.replace(span="torch node emb = aten.embedding({x})")
            out = bb.emit_output(call, name_hint="rows")
        bb.emit_func_output(out)
    mod = R.transform.LegalizeOps()(bb.get())
    messages = []
    tir.functor.post_order_visit(mod["take"].body, lambda n: messages.append(n.args[3].value)
                                 if isinstance(n, tir.Call) and n.op == "tir.check_index" else None)
    assert set(messages) == {"index {index} in ids is out of range [{lo}, {hi}) for axis 0 of x\n"
                             '  in rows = R.take(x, ids, axis=0, mode="nonnegative") from torch node emb = '
                             "aten.embedding({{x}})"}
    lib = graphc.build(mod["take"], target="llvm")
    with pytest.raises(IndexError, match=r"index 5 in ids .*\n  in rows = R.take.* aten.embedding\(\{x\}\)"):
        lib["main"](np.zeros((5, 3), "float32"), np.array([0, 5]), np.zeros((2, 3), "float32"))
