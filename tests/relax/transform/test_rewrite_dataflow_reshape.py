"""RewriteDataflowReshape: legalized reshapes (static and symbolic) become R.reshape again."""

from graphc import relax, tir
from graphc.ir import assert_structural_equal
from graphc.relax.transform.rewrite_dataflow_reshape import has_reshape_pattern
from graphc.script import from_source

R = relax


def _legalized(shape, make, dataflow=True):
    x = R.Var("x", R.TensorStructInfo(shape, "float32"))
    bb = R.BlockBuilder()
    with bb.function("main", [x]):
        if dataflow:
            with bb.dataflow():
                gv = bb.emit_output(make(x))
        else:
            gv = bb.emit(make(x))
        bb.emit_func_output(gv)
    return bb.get(), R.transform.LegalizeOps()(bb.get())


def _value(mod):
    return mod["main"].body.blocks[0].bindings[0].value


def test_static_reshape():
    before, legalized = _legalized((2, 3, 4), lambda x: R.op.reshape(x, (6, 4)))
    after = R.transform.RewriteDataflowReshape()(legalized)
    assert_structural_equal(_value(after), _value(before))
    assert R.analysis.well_formed(after)


def test_symbolic_flatten_and_expand_dims():
    n = tir.Var("n", "int64")
    before, legalized = _legalized((n, 28, 28), lambda x: R.op.reshape(x, (n, 784)))
    assert _value(R.transform.RewriteDataflowReshape()(legalized)).op is R.Op.get("relax.reshape")
    _, legalized = _legalized((n, 8), lambda x: R.op.expand_dims(x, [1]))
    assert _value(R.transform.RewriteDataflowReshape()(legalized)).op is R.Op.get("relax.reshape")


def test_other_copies_are_kept():
    for make in (lambda x: R.op.permute_dims(x), lambda x: R.op.exp(x), lambda x: R.op.flip(x, 0)):
        _, legalized = _legalized((4, 4), make)
        after = R.transform.RewriteDataflowReshape()(legalized)
        assert after["main"] is legalized["main"]
        assert not has_reshape_pattern(legalized[_value(legalized).args[0]])


def test_only_in_dataflow_blocks_and_idempotent():
    _, legalized = _legalized((2, 6), lambda x: R.op.reshape(x, (3, 4)), dataflow=False)
    assert R.transform.RewriteDataflowReshape()(legalized)["main"] is legalized["main"]
    _, legalized = _legalized((2, 6), lambda x: R.op.reshape(x, (3, 4)))
    after = R.transform.RewriteDataflowReshape()(legalized)
    assert R.transform.RewriteDataflowReshape()(after)["main"] is after["main"]
    assert_structural_equal(from_source(after.script()), after)
