"""call_tir: struct info from sinfo_args and argument checks."""

import pytest

from graphc import relax, tir
from graphc.errors import TypeInferenceError
from graphc.ir import GlobalVar

R = relax


def test_call_tir_struct_info():
    n = tir.Var("n", "int64")
    x = R.Var("x", R.TensorStructInfo((n,), "float32"))
    out = R.TensorStructInfo((n,), "float32")
    call = R.op.call_tir(GlobalVar("f"), [x], out)
    assert call.op.name == "relax.call_tir" and isinstance(call.args[1], R.Tuple)
    assert call.sinfo_args == (out,)
    assert R.BlockBuilder().normalize(call).struct_info is out
    two = R.op.call_tir(GlobalVar("g"), x, [out, out])
    assert isinstance(R.BlockBuilder().normalize(two).struct_info, R.TupleStructInfo)
    with_vars = R.op.call_tir(GlobalVar("h"), [x], [out], tir_vars=[n])
    assert R.BlockBuilder().normalize(with_vars).args[2].values == (n,)


def test_call_tir_errors():
    x = R.Var("x", R.TensorStructInfo((2,), "float32"))
    op = R.Op.get("relax.call_tir")
    bb = R.BlockBuilder()
    out = R.TensorStructInfo((2,), "float32")
    with pytest.raises(TypeInferenceError, match="'call_tir' expects argument gvar to be a GlobalVar"):
        bb.normalize(R.Call(op, [x, R.Tuple([x])], sinfo_args=[out]))
    with pytest.raises(TypeInferenceError, match="'call_tir' expects argument args to be a tuple"):
        bb.normalize(R.Call(op, [GlobalVar("f"), x], sinfo_args=[out]))
    with pytest.raises(TypeInferenceError, match="exactly one sinfo_args"):
        bb.normalize(R.Call(op, [GlobalVar("f"), R.Tuple([x])]))
    with pytest.raises(TypeInferenceError, match=r"expects \(gvar, args\)"):
        bb.normalize(R.Call(op, [GlobalVar("f")], sinfo_args=[out]))
    with pytest.raises(TypeInferenceError, match="argument tir_vars to be a shape"):
        bb.normalize(R.Call(op, [GlobalVar("f"), R.Tuple([x]), x], sinfo_args=[out]))
    with pytest.raises(TypeInferenceError, match="out_sinfo to be tensor struct info"):
        R.op.call_tir(GlobalVar("f"), [x], R.ShapeStructInfo((1,)))


def test_call_tir_takes_tvms_out_ty_and_scalar_arguments():
    m = tir.Var("m", "int64")
    out = R.TensorStructInfo((1,), "int64")
    call = R.op.call_tir(GlobalVar("f"), (m,), out_ty=out)
    assert call.sinfo_args == (out,)
    assert isinstance(call.args[1].fields[0], R.PrimValue) and call.args[1].fields[0].value is m
