"""call_te / emit_te: TE functions become PrimFuncs called through call_tir."""

import pytest

from graphc import relax, te, tir
from graphc.errors import TypeInferenceError
from graphc.ir import structural_equal

R = relax


def T(shape, dtype="float32"):
    return R.TensorStructInfo(shape, dtype)


def te_add(a, b):
    return te.compute(a.shape, lambda *i: a(*i) + b(*i), name="add")


def te_scale(a, factor):
    return te.compute(a.shape, lambda *i: a(*i) * factor, name="scale")


def test_call_te_makes_call_tir_and_prim_func():
    x, y = R.Var("x", T((4, 8))), R.Var("y", T((4, 8)))
    bb = R.BlockBuilder()
    with bb.function("main", [x, y]):
        with bb.dataflow():
            call = bb.call_te(te_add, x, y)
            lv = bb.emit(call)
            gv = bb.emit_output(lv)
        bb.emit_func_output(gv)
    mod = bb.get()
    # the PrimFunc is named after the TE function, as in TVM
    assert call.op is R.Op.get("relax.call_tir") and call.args[0].name_hint == "te_add"
    assert call.args[1].fields == (x, y) and len(call.args) == 2
    assert repr(call.sinfo_args[0]) == 'R.Tensor((4, 8), dtype="float32")'
    assert repr(lv.struct_info) == 'R.Tensor((4, 8), dtype="float32")'
    prim = mod["te_add"]
    assert isinstance(prim, tir.PrimFunc) and len(prim.params) == 3
    assert "global_symbol" not in prim.attrs
    assert [b.name for b in prim.buffer_map.values()] == ["x", "y", "add"]
    assert R.analysis.well_formed(mod)


def test_identical_prim_funcs_are_deduplicated():
    x = R.Var("x", T((4,)))
    z = R.Var("z", T((5,)))
    bb = R.BlockBuilder()
    with bb.function("main", [x, z]):
        a = bb.emit_te(te_add, x, x)
        b = bb.emit_te(te_add, a, a)
        c = bb.emit_te(te_add, z, z)  # another shape: another PrimFunc, unique name
        bb.emit_func_output([b, c])
    mod = bb.get()
    assert sorted(gv.name_hint for gv in mod.get_global_vars()) == ["main", "te_add", "te_add1"]
    gvs = [bb.lookup_binding(v).args[0] for v in (a, b, c)]
    assert gvs[0] is gvs[1] and gvs[2].name_hint == "te_add1"


def test_primfunc_name_hint_and_kwargs():
    x = R.Var("x", T((4,)))
    bb = R.BlockBuilder()
    with bb.function("main", [x]):
        lv = bb.emit_te(te_scale, x, factor=2.0, primfunc_name_hint="times_two", name_hint="y")
        bb.emit_func_output(lv)
    assert lv.name_hint == "y" and "times_two" in bb.get()


def test_symbolic_shapes_flow_into_the_prim_func():
    n = tir.Var("n", "int64")
    x = R.Var("x", T((n, 4)))
    bb = R.BlockBuilder()
    with bb.function("main", [x]):
        lv = bb.emit_te(lambda a: te.compute((a.shape[0] * 4,), lambda i: a[i // 4, i % 4], name="flat"), x)
        bb.emit_func_output(lv)
    assert repr(lv.struct_info) == 'R.Tensor((n * 4,), dtype="float32")'
    prim = bb.get()["flat"]
    buf = list(prim.buffer_map.values())[0]
    assert buf.shape[0] is n and len(prim.params) == 2


def test_unbound_symbolic_vars_become_tir_vars():
    n, m = tir.Var("n", "int64"), tir.Var("m", "int64")
    x = R.Var("x", T((n,)))
    bb = R.BlockBuilder()
    with bb.function("main", [x]):
        call = bb.call_te(lambda a, k: te.compute((k + 1,), lambda i: a[0], name="head"), x, R.PrimValue(m))
        bb.emit_func_output(x)
    assert len(call.args) == 3 and call.args[2].values == (m,)
    prim = bb.get()["head"]
    assert prim.params[2] is m and len(prim.params) == 3  # inputs, outputs, then tir_vars (TVM)


def test_tuple_and_shape_arguments_and_multiple_outputs():
    x, y = R.Var("x", T((3,))), R.Var("y", T((3,)))

    def split_sum(tensors, shape):
        a, b = tensors
        s = te.compute(shape, lambda i: a[i] + b[i], name="s")
        d = te.compute(shape, lambda i: a[i] - b[i], name="d")
        return [s, d]

    bb = R.BlockBuilder()
    with bb.function("main", [x, y]):
        lv = bb.emit_te(split_sum, R.Tuple([x, y]), R.ShapeExpr((3,)))
        bb.emit_func_output(lv)
    assert isinstance(lv.struct_info, R.TupleStructInfo) and len(lv.struct_info.fields) == 2
    assert "split_sum" in bb.get()


def test_call_te_normalizes_nested_arguments():
    x = R.Var("x", T((4,)))
    bb = R.BlockBuilder()
    with bb.function("main", [x]):
        lv = bb.emit_te(te_add, R.op.nn.relu(x), x)
        bb.emit_func_output(lv)
    bindings = bb.get()["main"].body.blocks[0].bindings
    assert str(bindings[0].value) == "R.nn.relu(x)" and bindings[1].value.args[1].fields[0] is bindings[0].var


def test_call_te_errors():
    x = R.Var("x", R.TensorStructInfo(ndim=1, dtype="float32"))
    s = R.Var("s", R.ShapeStructInfo(ndim=1))
    y = R.Var("y", T((2,)))
    bb = R.BlockBuilder()
    with bb.function("main", [x, s, y]):
        with pytest.raises(TypeInferenceError, match="call_te: argument x needs a known shape and dtype"):
            bb.call_te(te_add, x, x)
        with pytest.raises(TypeInferenceError, match="call_te: argument s must be a tensor, shape or scalar"):
            bb.call_te(te_add, s, s)
        with pytest.raises(TypeInferenceError, match="must return te.Tensor"):
            bb.call_te(lambda a: 3, y)
        bb.emit_func_output(y)


def test_same_te_function_twice_gives_structurally_equal_modules():
    def build():
        x = R.Var("x", T((4,)))
        bb = R.BlockBuilder()
        with bb.function("main", [x]):
            bb.emit_func_output(bb.emit_te(te_add, x, x))
        return bb.get()

    assert structural_equal(build(), build())


def test_generated_prim_func_is_valid_and_computes():
    import numpy as np

    import graphc
    from graphc.script import from_source
    from graphc.tir.analysis import verify_well_formed

    n = tir.Var("n", "int64")
    x = R.Var("x", T((n, 4)))
    bb = R.BlockBuilder()
    with bb.function("main", [x]):
        flat = lambda a: te.compute((a.shape[0] * 4,), lambda i: a[i // 4, i % 4] + 1.0, name="flat")  # noqa: E731
        bb.emit_func_output(bb.emit_te(flat, x))
    prim = bb.get()["flat"]
    verify_well_formed(prim)
    assert structural_equal(from_source(prim.script()), prim)
    lib = graphc.build(prim.with_attr("global_symbol", "flat"), target="llvm")
    a = graphc.runtime.tensor(np.arange(12, dtype="float32").reshape(3, 4))
    out = graphc.runtime.empty((12,), "float32")
    lib["flat"](a, out)
    np.testing.assert_allclose(out.numpy(), np.arange(12) + 1.0)
