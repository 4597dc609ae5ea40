"""Struct info of permute_dims and reshape."""

import pytest

from graphc import relax, tir
from graphc.errors import TypeInferenceError

R = relax


def var(shape=None, dtype="float32", ndim=-1):
    return R.Var("x", R.TensorStructInfo(shape, dtype, ndim))


def infer(call):
    return repr(R.BlockBuilder().normalize(call).struct_info)


def test_permute_dims():
    n = tir.Var("n", "int64")
    assert infer(R.op.permute_dims(var((n, 2, 3)))) == 'R.Tensor((3, 2, n), dtype="float32")'
    assert infer(R.op.permute_dims(var((n, 2, 3)), [0, 2, 1])) == 'R.Tensor((n, 3, 2), dtype="float32")'
    assert infer(R.op.permute_dims(var((n, 2, 3)), [-1, 0, 1])) == 'R.Tensor((3, n, 2), dtype="float32")'
    assert infer(R.op.permute_dims(var(ndim=3), [1, 0, 2])) == 'R.Tensor(dtype="float32", ndim=3)'
    assert infer(R.op.permute_dims(var(ndim=-1))) == 'R.Tensor(dtype="float32")'
    assert infer(R.op.permute_dims(var(ndim=-1), [1, 0])) == 'R.Tensor(dtype="float32", ndim=2)'
    assert R.op.permute_dims(var((1,))).attrs.axes is None


def test_permute_dims_errors():
    with pytest.raises(TypeInferenceError, match=r"'permute_dims' expects axes to list all 3 dimensions of "
                                                  r"x R.Tensor\(\(1, 2, 3\), dtype=\"float32\"\), "
                                                  r"got axes=\[1, 0\]"):
        infer(R.op.permute_dims(var((1, 2, 3)), [1, 0]))
    with pytest.raises(TypeInferenceError, match=r"'permute_dims' expects axes to be a permutation of 0..1, "
                                                  r"got \[0, 0\]"):
        infer(R.op.permute_dims(var((1, 2)), [0, 0]))
    with pytest.raises(TypeInferenceError, match=r"'permute_dims' expects axes in \[-2, 2\) "
                                                  r"for a 2-d tensor, got 2"):
        infer(R.op.permute_dims(var((1, 2)), [0, 2]))


def test_reshape():
    n = tir.Var("n", "int64")
    assert infer(R.op.reshape(var((2, 3)), (3, 2))) == 'R.Tensor((3, 2), dtype="float32")'
    assert infer(R.op.reshape(var((2, 3)), (-1,))) == 'R.Tensor((6,), dtype="float32")'
    assert infer(R.op.reshape(var((n, 4)), (n * 2, 2))) == 'R.Tensor((n * 2, 2), dtype="float32")'
    assert infer(R.op.reshape(var((n, 4)), (-1, 2))) == 'R.Tensor((n * 2, 2), dtype="float32")'
    assert infer(R.op.reshape(var(ndim=2), (3, 2))) == 'R.Tensor((3, 2), dtype="float32")'
    s = R.Var("s", R.ShapeStructInfo(ndim=3))
    assert infer(R.op.reshape(var((2, 3)), s)) == 'R.Tensor(dtype="float32", ndim=3)'
    call = R.BlockBuilder().normalize(R.op.reshape(var((2, 3)), R.ShapeExpr((6,))))
    assert call.struct_info.shape is call.args[1]  # the shape argument is the result's shape


def test_reshape_errors():
    with pytest.raises(TypeInferenceError) as err:
        infer(R.op.reshape(var((2, 3)), (4, 2)))
    assert "'reshape' expects the new shape to hold as many elements as x R.Tensor((2, 3)" in str(err.value)
    assert "(6)" in str(err.value) and "R.Shape([4, 2]) (8)" in str(err.value)
    with pytest.raises(TypeInferenceError, match="at most one -1"):
        R.op.reshape(var((2, 3)), (-1, -1))
    with pytest.raises(TypeInferenceError, match="can infer a -1 in shape only from a known shape"):
        R.op.reshape(var(ndim=2), (-1,))
    with pytest.raises(TypeInferenceError, match="'reshape' expects argument shape to be a shape"):
        infer(R.Call(R.Op.get("relax.reshape"), [var((2,)), var((2,))]))
