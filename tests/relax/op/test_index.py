"""strided_slice / take: struct info, errors, legalized numerics."""

import numpy as np
import pytest

from graphc import relax, tir
from graphc.errors import TypeInferenceError

R = relax
N = tir.Var("n", "int64")
SHAPES = [((4, 6), (4, 6)), ((N, 6), (7, 6))]


def _x(run_shape):
    return np.arange(np.prod(run_shape), dtype="float32").reshape(run_shape)


@pytest.mark.parametrize("shape,run_shape", SHAPES)
def test_strided_slice_numerics(legalize_run, shape, run_shape):
    x, sinfo = _x(run_shape), [R.TensorStructInfo(shape, "float32")]
    cases = [
        (([1], [1], [5], [2]), np.s_[:, 1:5:2]),
        (([0, 1], [1, -4], [100, -1], None), np.s_[1:100, -4:-1]),
        (([0], [-2], [10], None), np.s_[-2:10]),
        (([1], [5], [0], [-2]), np.s_[:, 5:0:-2]),
    ]
    for (axes, begin, end, strides), key in cases:
        out = legalize_run(
            lambda a: R.op.strided_slice(a, axes, begin, end, strides), sinfo, [x], "strided_slice"
        )[0]
        np.testing.assert_array_equal(out, x[key])


@pytest.mark.parametrize("shape,run_shape", SHAPES)
def test_take_numerics(legalize_run, shape, run_shape):
    x = _x(run_shape)
    idx = np.array([[0, 3], [2, 2]], dtype="int64")
    sinfos = [R.TensorStructInfo(shape, "float32"), R.TensorStructInfo((2, 2), "int64")]
    for axis in (0, 1, None):
        out = legalize_run(lambda a, i: R.op.take(a, i, axis), sinfos, [x, idx], "take")[0]
        np.testing.assert_array_equal(out, np.take(x, idx, axis=axis))
    big = np.array([[9, -1], [1, 40]], dtype="int64")
    out = legalize_run(lambda a, i: R.op.take(a, i, 1, mode="clip"), sinfos, [x, big])[0]
    np.testing.assert_array_equal(out, np.take(x, big, axis=1, mode="clip"))
    out = legalize_run(lambda a, i: R.op.take(a, i, 1, mode="wrap"), sinfos, [x, big])[0]
    np.testing.assert_array_equal(out, np.take(x, big, axis=1, mode="wrap"))


def test_struct_info_and_errors():
    bb = R.BlockBuilder()
    x = R.Var("x", R.TensorStructInfo((N, 6), "float32"))
    sinfo = bb.normalize(R.op.strided_slice(x, [0, 1], [1, 1], [3, 5])).struct_info
    assert (
        repr(sinfo) == 'R.Tensor((T.max(T.min(n, 3) - T.min(n, 1), 0), 4), dtype="float32")'
        or sinfo.shape_values[1].value == 4
    )
    with pytest.raises(TypeInferenceError, match="'strided_slice' expects non-zero strides"):
        bb.normalize(R.op.strided_slice(x, [1], [0], [2], [0]))
    with pytest.raises(
        TypeInferenceError, match="'strided_slice' expects axes, begin, end and strides of one"
    ):
        bb.normalize(R.op.strided_slice(x, [1], [0, 1], [2]))
    with pytest.raises(TypeInferenceError, match="'take' expects integer indices"):
        bb.normalize(R.op.take(x, x, 0))
    with pytest.raises(TypeInferenceError, match="'take' expects axis in \\[-2, 2\\)"):
        bb.normalize(R.op.take(x, R.Var("i", R.TensorStructInfo((2,), "int32")), 2))
