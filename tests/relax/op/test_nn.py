"""Struct info of nn operators."""

import pytest

from graphc import relax, tir
from graphc.errors import TypeInferenceError

R = relax


def test_relu_keeps_struct_info():
    n = tir.Var("n", "int64")
    x = R.Var("x", R.TensorStructInfo((n, 3), "float16"))
    call = R.BlockBuilder().normalize(R.op.nn.relu(x))
    assert call.struct_info is x.struct_info and call.op.name == "relax.nn.relu"
    y = R.Var("y", R.TensorStructInfo(ndim=-1, dtype=""))
    assert repr(R.BlockBuilder().normalize(R.op.nn.relu(y)).struct_info) == "R.Tensor()"


def test_relu_rejects_non_tensors():
    t = R.Var("t", R.TupleStructInfo([]))
    with pytest.raises(TypeInferenceError, match=r"'nn.relu' expects argument data to be a tensor "
                                                  r".* got R.Tuple\(\)"):
        R.BlockBuilder().normalize(R.op.nn.relu(t))
