"""The operator registry: look-up, registration, pattern kinds, generic checks."""

import pytest

from graphc import relax
from graphc.errors import TypeInferenceError
from graphc.relax.op.registry import OpPatternKind, infer_struct_info, list_ops, register_op, set_legalize

R = relax


def test_op_get_is_unique_and_unknown_op_errors():
    assert R.Op.get("relax.add") is R.Op.get("relax.add")
    with pytest.raises(TypeInferenceError, match="unknown Relax operator 'relax.mul'; did you mean"):
        R.Op.get("relax.mul")
    with pytest.raises(TypeInferenceError, match="unknown Relax operator 'zzz'$"):
        R.Op.get("zzz")


def test_pattern_kind_values_match_tvm():
    assert [k.value for k in OpPatternKind] == [0, 1, 2, 3, 4, 7, 8]
    assert R.Op.get("relax.add").pattern == OpPatternKind.kBroadcast
    assert R.Op.get("relax.nn.relu").pattern == OpPatternKind.kElemWise
    assert R.Op.get("relax.permute_dims").pattern == OpPatternKind.kInjective
    assert R.Op.get("relax.matmul").pattern == OpPatternKind.kOutEWiseFusable
    assert R.Op.get("relax.call_tir").pattern == OpPatternKind.kOpaque
    assert R.Op.get("relax.add").get_attr("TOpPattern") == 1


def test_registered_ops():
    for name in ["relax.add", "relax.subtract", "relax.multiply", "relax.divide", "relax.nn.relu",
                 "relax.matmul", "relax.permute_dims", "relax.reshape", "relax.call_tir"]:
        assert name in list_ops()


def test_register_custom_op_with_legalize_hook():
    def infer(call, bb):
        return call.args[0].struct_info

    def legalize(bb, call):
        return call.args[0]

    op = register_op("test.identity", 1, infer, pattern=OpPatternKind.kElemWise, attrs={"k": "a knob"})
    x = R.Var("x", R.TensorStructInfo((2,), "float32"))
    assert R.BlockBuilder().normalize(R.Call(op, [x], {"k": 1})).struct_info is x.struct_info
    assert op.get_attr("FLegalize") is None
    set_legalize("test.identity", legalize)
    assert op.get_attr("FLegalize") is legalize and op.get_attr("FInferStructInfo") is infer
    assert register_op("test.identity", 1, infer) is op  # re-registering keeps the Op


def test_generic_arity_and_attr_checks():
    x = R.Var("x", R.TensorStructInfo((2,), "float32"))
    with pytest.raises(TypeInferenceError, match="'add' expects 2 argument"):
        infer_struct_info(R.Call(R.Op.get("relax.add"), [x]))
    with pytest.raises(TypeInferenceError, match=r"'nn.relu' got unknown attribute\(s\) \['alpha'\]"):
        infer_struct_info(R.Call(R.Op.get("relax.nn.relu"), [x], {"alpha": 0.1}))
    register_op("test.noinfer", 1)
    with pytest.raises(TypeInferenceError, match="no struct info inference"):
        infer_struct_info(R.Call(R.Op.get("test.noinfer"), [x]))


def test_float_only_in_the_registry_matches_the_inference():
    i = R.Var("i", R.TensorStructInfo((2,), "int32"))
    float_only = {name for name in list_ops() if R.Op.get(name).info.float_only}
    assert {"relax.exp", "relax.sigmoid", "relax.erf", "relax.nn.silu", "relax.nn.softmax"} <= float_only
    for name in sorted(float_only):
        with pytest.raises(TypeInferenceError, match="float dtype"):
            R.BlockBuilder().normalize(R.Call(R.Op.get(name), [i]))
    for name in ["relax.abs", "relax.negative", "relax.floor", "relax.square", "relax.nn.relu"]:
        assert name not in float_only
        assert R.BlockBuilder().normalize(R.Call(R.Op.get(name), [i])).struct_info.dtype == "int32"
