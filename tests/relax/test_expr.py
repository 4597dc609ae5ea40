"""Relax expression nodes: construction, struct info of leaves, identity and replace."""

import numpy as np
import pytest

from graphc import relax, tir
from graphc.errors import TypeInferenceError
from graphc.ir import GlobalVar, structural_equal

R = relax


def test_var_and_dataflow_var():
    s = R.TensorStructInfo((2, 3), "float32")
    x, y = R.Var("x", s), R.DataflowVar("y", s)
    assert x.struct_info is s and x.struct_info_ is s and x.name_hint == "x"
    assert isinstance(y, R.Var) and y.struct_info is s
    assert x != R.Var("x", s) and hash(x) != hash(R.Var("x", s))
    assert structural_equal(x, R.Var("z", s))  # compared by binding; names do not matter
    assert not structural_equal(x, R.Var("x", R.TensorStructInfo((2,), "float32")))


def test_var_without_struct_info_raises_on_access():
    v = R.Var("v")
    assert v.struct_info_ is None
    with pytest.raises(TypeInferenceError, match="has no struct info yet"):
        _ = v.struct_info
    with pytest.raises(TypeInferenceError, match="must be a StructInfo"):
        R.Var("w", (2, 3))


def test_call_struct_info_needs_normalization():
    x = R.Var("x", R.TensorStructInfo((2,), "float32"))
    call = R.op.add(x, x)
    with pytest.raises(TypeInferenceError, match="normalize it first"):
        _ = call.struct_info
    assert repr(R.BlockBuilder().normalize(call).struct_info) == 'R.Tensor((2,), dtype="float32")'


def test_constants():
    c = R.const(np.arange(6, dtype="float32").reshape(2, 3))
    assert repr(c.struct_info) == 'R.Tensor((2, 3), dtype="float32")'
    assert c.data.numpy().sum() == 15
    assert R.const(1).struct_info.dtype == "int32"  # TVM's default for a Python int
    assert R.const(2**40).struct_info.dtype == "int64" and R.const([1, 2]).struct_info.dtype == "int32"
    assert R.const(np.arange(3)).struct_info.dtype == "int64"  # numpy arrays keep their dtype
    assert R.const(1.5).struct_info.dtype == "float32"
    assert R.const(1.5, "float16").struct_info.dtype == "float16"
    assert R.const([1, 2], "int32").data.numpy().tolist() == [1, 2]
    assert R.const(True).struct_info.dtype == "bool"
    assert structural_equal(R.const([1.0, 2.0]), R.const([1.0, 2.0]))
    assert not structural_equal(R.const([1.0, 2.0]), R.const([1.0, 3.0]))


def test_leaf_struct_infos():
    n = tir.Var("n", "int64")
    shape = R.ShapeExpr((n, 4))
    assert repr(shape.struct_info) == "R.Shape([n, 4])" and len(shape) == 2 and shape[0] is n
    assert list(shape)[1].value == 4
    assert repr(R.PrimValue(3).struct_info) == "R.Prim(value=3)"
    assert R.PrimValue(n).struct_info.value is n
    assert R.PrimValue(1.5).struct_info.dtype == "float64"
    assert isinstance(R.StringImm("hi").struct_info, R.ObjectStructInfo)
    assert R.DataTypeImm("float32").value == "float32"
    assert isinstance(R.ExternFunc("vm.builtin.alloc").struct_info, R.FuncStructInfo)
    with pytest.raises(TypeInferenceError, match="must be integers"):
        R.ShapeExpr((tir.FloatImm("float32", 1.0),))


def test_tuple_struct_info_known_when_fields_are():
    x = R.Var("x", R.TensorStructInfo((2,), "float32"))
    t = R.Tuple([x, R.const(1)])
    assert repr(t.struct_info) == 'R.Tuple(R.Tensor((2,), dtype="float32"), R.Tensor((), dtype="int32"))'
    assert len(t) == 2 and t[0] is x
    assert R.Tuple([R.op.add(x, x)]).struct_info_ is None
    got = R.BlockBuilder().normalize(R.TupleGetItem(t, 1))
    assert got.struct_info.dtype == "int32"


def test_tuple_get_item_errors():
    x = R.Var("x", R.TensorStructInfo((2,), "float32"))
    bb = R.BlockBuilder()
    with pytest.raises(TypeInferenceError, match="TupleGetItem expects a tuple"):
        bb.normalize(R.TupleGetItem(x, 0))
    with pytest.raises(TypeInferenceError, match="index 2 out of range"):
        bb.normalize(R.TupleGetItem(R.Tuple([x]), 2))


def test_call_fields_and_attrs():
    x = R.Var("x", R.TensorStructInfo((2, 3), "float32"))
    call = R.op.permute_dims(x, [1, 0])
    assert call.op is R.Op.get("relax.permute_dims") and call.args == (x,)
    assert call.attrs.axes == (1, 0) and call.attrs["axes"] == (1, 0)
    with pytest.raises(TypeError, match="immutable"):
        call.attrs["axes"] = None
    with pytest.raises(TypeError, match="immutable"):
        call.attrs.update(axes=None)
    import copy

    assert copy.deepcopy(call.attrs) == {"axes": (1, 0)}
    with pytest.raises(AttributeError, match="no field 'foo'"):
        _ = call.attrs.foo
    assert call.replace(args=(x,)) is not call  # a new tuple object is a change
    assert call.replace(op=call.op) is call


def test_function_struct_info_and_attrs():
    n = tir.Var("n", "int64")
    x = R.Var("x", R.TensorStructInfo((n, 2), "float32"))
    body = R.SeqExpr([], x)
    R.set_struct_info(body, x.struct_info)
    f = R.Function([x], body)
    assert repr(f.ret_struct_info) == 'R.Tensor((n, 2), dtype="float32")'
    assert f.ret_ty is f.ret_struct_info  # TVM's newest name
    assert isinstance(f.struct_info, R.FuncStructInfo) and f.struct_info.params == (x.struct_info,)
    g = f.with_attr("global_symbol", "main")
    assert g is not f and g.attrs["global_symbol"] == "main" and f.attrs == {}
    assert g.with_attr({"num_input": 1}).attrs == {"global_symbol": "main", "num_input": 1}
    assert g.without_attr("global_symbol").attrs == {}
    assert f.replace(body=body) is f
    with pytest.raises(TypeInferenceError, match="Function parameters must be Vars with struct info"):
        R.Function([R.Var("y")], body)


def test_set_struct_info_only_once():
    x = R.Var("x", R.TensorStructInfo((2,), "float32"))
    call = R.op.add(x, x)
    R.set_struct_info(call, R.TensorStructInfo((2,), "float32"))
    R.set_struct_info(call, R.TensorStructInfo((2,), "float32"))  # the same structure: fine
    with pytest.raises(TypeInferenceError, match="cannot change it"):
        R.set_struct_info(call, R.TensorStructInfo((3,), "float32"))


def test_is_leaf():
    x = R.Var("x", R.TensorStructInfo((2,), "float32"))
    assert all(R.is_leaf(e) for e in [x, R.const(1), R.ShapeExpr((1,)), R.PrimValue(1), GlobalVar("f"),
                                      R.Op.get("relax.add"), R.StringImm("s")])
    assert not R.is_leaf(R.Tuple([x])) and not R.is_leaf(R.op.add(x, x))


def test_binding_and_block_nodes():
    x = R.Var("x", R.TensorStructInfo((2,), "float32"))
    y = R.DataflowVar("y", x.struct_info)
    b = R.VarBinding(y, x)
    block = R.DataflowBlock([b])
    assert block.bindings == (b,) and isinstance(block, R.BindingBlock)
    mc = R.MatchCast(R.Var("z", R.TensorStructInfo(ndim=1)), x, R.TensorStructInfo(ndim=1))
    assert mc.struct_info.ndim == 1
    assert "R.match_cast(x" in repr(mc) and repr(b) == 'y: R.Tensor((2,), dtype="float32") = x'
