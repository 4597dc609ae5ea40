"""Fused functions are named and annotated as TVM names them."""

from graphc import relax, topi
from graphc.ir import assert_structural_equal

R = relax


def test_fused_function_named_after_its_members():
    x = R.Var("x", R.TensorStructInfo((10, 1), "float32"))
    bb = R.BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            lv0 = bb.emit_te(topi.add, x, R.const(1, "float32"))
            lv1 = bb.emit_te(topi.exp, lv0)
            gv = bb.emit_output(bb.call_te(topi.squeeze, lv1))
        bb.emit_func_output(gv)
    mod = R.transform.FuseOps()(R.transform.AnnotateTIROpPattern()(bb.get()))
    assert [gv.name_hint for gv in mod.get_global_vars()] == ["add", "exp", "fused_add_exp_squeeze", "main",
                                                              "squeeze"]
    fused = mod["fused_add_exp_squeeze"]
    assert fused.attrs["Primitive"] is True and "global_symbol" not in fused.attrs
    assert 'R.func_attr({"Primitive": True})' in mod.script()
    # FuseTIR keeps the name for the PrimFunc it makes
    after = R.transform.FuseTIR()(mod)
    assert [gv.name_hint for gv in after.get_global_vars()] == ["fused_add_exp_squeeze", "main"]


def test_legalized_operators_fuse_under_tvms_prim_func_names():
    x = R.Var("x", R.TensorStructInfo((4, 1), "float32"))
    bb = R.BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            a = bb.emit(R.op.add(x, x))
            b = bb.emit(R.op.exp(a))
            gv = bb.emit_output(R.op.squeeze(b, axis=[1]))
        bb.emit_func_output(gv)
    mod = R.get_pipeline("zero")(bb.get())
    # LegalizeOps names the unary PrimFuncs tir_<op>, as TVM's legalization does
    assert [gv.name_hint for gv in mod.get_global_vars()] == ["fused_add_tir_exp_squeeze", "main"]
    assert_structural_equal(mod, R.get_pipeline("zero")(bb.get()))
