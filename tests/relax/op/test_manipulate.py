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


# --- legalized numerics and the rest of the shape-only family -----------------------------------

import numpy as np  # noqa: E402

N = tir.Var("n", "int64")
SHAPES = [((2, 3, 4), (2, 3, 4)), ((N, 3, 4), (5, 3, 4))]


def _x(run_shape):
    return np.arange(np.prod(run_shape), dtype="float32").reshape(run_shape)


def _sinfo(shape):
    return R.TensorStructInfo(shape, "float32")


@pytest.mark.parametrize("shape,run_shape", SHAPES)
def test_permute_dims_and_reshape_numerics(legalize_run, shape, run_shape):
    x = _x(run_shape)
    for axes in (None, [2, 0, 1], [0, -1, 1]):
        out = legalize_run(lambda a: R.op.permute_dims(a, axes), [_sinfo(shape)], [x], "transpose")[0]
        np.testing.assert_array_equal(out, np.transpose(x, axes))
    for new in ((-1, 4), (-1,), (-1, 2, 6)):
        out = legalize_run(lambda a: R.op.reshape(a, new), [_sinfo(shape)], [x], "reshape")[0]
        np.testing.assert_array_equal(out, x.reshape(new))


@pytest.mark.parametrize("shape,run_shape", SHAPES)
def test_expand_squeeze_flatten_broadcast_numerics(legalize_run, shape, run_shape):
    x = _x(run_shape)
    out = legalize_run(lambda a: R.op.expand_dims(a, [0, -1]), [_sinfo(shape)], [x], "expand_dims")[0]
    np.testing.assert_array_equal(out, x[None, ..., None])
    out = legalize_run(R.op.flatten, [_sinfo(shape)], [x], "flatten")[0]
    np.testing.assert_array_equal(out, x.ravel())
    y = x[:, :1, None, :]
    yshape = (shape[0], 1, 1, 4)
    out = legalize_run(lambda a: R.op.squeeze(a, [1, 2]), [_sinfo(yshape)], [y], "squeeze")[0]
    np.testing.assert_array_equal(out, y[:, 0, 0, :])
    target = (2, shape[0], 3, 4)
    out = legalize_run(lambda a: R.op.broadcast_to(a, target), [_sinfo(shape[:1] + (1, 4))], [x[:, :1]],
                       "broadcast_to")[0]
    np.testing.assert_array_equal(out, np.broadcast_to(x[:, :1], (2,) + x.shape))


def test_shape_family_struct_info_and_errors():
    x = R.Var("x", _sinfo((N, 1, 4)))
    bb = R.BlockBuilder()
    assert repr(bb.normalize(R.op.expand_dims(x, 1)).struct_info) == 'R.Tensor((n, 1, 1, 4), dtype="float32")'
    assert repr(bb.normalize(R.op.squeeze(x, 1)).struct_info) == 'R.Tensor((n, 4), dtype="float32")'
    assert repr(bb.normalize(R.op.squeeze(x)).struct_info) == 'R.Tensor(dtype="float32")'
    assert repr(bb.normalize(R.op.flatten(x)).struct_info) == 'R.Tensor((n * 4,), dtype="float32")'
    assert repr(bb.normalize(R.op.broadcast_to(x, (2, N, 3, 4))).struct_info) == \
        'R.Tensor((2, n, 3, 4), dtype="float32")'
    with pytest.raises(TypeInferenceError, match="'squeeze' can only remove size-1 dimensions, but dim"):
        bb.normalize(R.op.squeeze(x, [2]))
    with pytest.raises(TypeInferenceError, match="'broadcast_to' cannot .* dimension 2 is 4, target 5"):
        bb.normalize(R.op.broadcast_to(x, (N, 3, 5)))
    with pytest.raises(TypeInferenceError, match="'expand_dims' expects distinct axis"):
        bb.normalize(R.op.expand_dims(x, [1, 1]))
    for name in ("expand_dims", "squeeze", "flatten", "permute_dims", "reshape"):
        assert R.Op.get(f"relax.{name}").pattern is R.OpPatternKind.kInjective
