"""full / zeros / ones (+ _like), arange, tril / triu, astype: struct info and legalized numerics."""

import numpy as np
import pytest

from graphc import relax, tir
from graphc.errors import TypeInferenceError

R = relax
N = tir.Var("n", "int64")


def _x(run_shape):
    return np.arange(np.prod(run_shape), dtype="float32").reshape(run_shape) + 1


@pytest.mark.parametrize("shape,run_shape", [((2, 3), (2, 3)), ((N, 3), (4, 3))])
def test_like_creation_and_astype(legalize_run, shape, run_shape):
    x, sinfo = _x(run_shape), [R.TensorStructInfo(shape, "float32")]
    np.testing.assert_array_equal(legalize_run(R.op.zeros_like, sinfo, [x], "zeros")[0], np.zeros(run_shape))
    out = legalize_run(lambda a: R.op.ones_like(a, "int32"), sinfo, [x], "ones")[0]
    assert out.dtype == np.int32 and (out == 1).all()
    out = legalize_run(lambda a: R.op.full_like(a, 2.5), sinfo, [x], "full")[0]
    np.testing.assert_array_equal(out, np.full(run_shape, 2.5))
    out = legalize_run(lambda a: R.op.astype(a, "int32"), sinfo, [x * 1.5], "cast")[0]
    np.testing.assert_array_equal(out, (x * 1.5).astype("int32"))
    for fn, ref in ((R.op.tril, np.tril), (R.op.triu, np.triu)):
        for k in (0, 1, -1):
            out = legalize_run(lambda a: fn(a, k), sinfo, [x], fn.__name__)[0]
            np.testing.assert_array_equal(out, ref(x, k))


def test_shape_creation(legalize_run):
    out = legalize_run(lambda: R.op.zeros((2, 3), "float32"), [], [])[0]
    np.testing.assert_array_equal(out, np.zeros((2, 3)))
    out = legalize_run(lambda: R.op.ones((4,), "int64"), [], [])[0]
    np.testing.assert_array_equal(out, np.ones(4))
    out = legalize_run(lambda: R.op.full((2, 2), 7.0), [], [], "full")[0]
    np.testing.assert_array_equal(out, np.full((2, 2), 7.0))
    for args, dtype in (((5,), None), ((1, 10, 3), None), ((0.5, 2.0, 0.25), None), ((2, 8, 2), "float32")):
        out = legalize_run(lambda: R.op.arange(*args, dtype=dtype), [], [], "arange")[0]
        np.testing.assert_allclose(out, np.arange(*args, dtype=dtype))


def test_symbolic_shape_creation(legalize_run):
    x = np.zeros((5, 2), "float32")
    out = legalize_run(
        lambda a: R.op.add(a, R.op.ones(R.ShapeExpr([N, 2]), "float32")),
        [R.TensorStructInfo((N, 2), "float32")],
        [x],
    )
    # add(x, ones) is two calls: the first binding is the ones PrimFunc, which takes n as a scalar
    assert out[0].shape == (5, 2) and (out[0] == 1).all()


def test_struct_info_and_errors():
    bb = R.BlockBuilder()
    x = R.Var("x", R.TensorStructInfo((N, 3), "float32"))
    assert repr(bb.normalize(R.op.full((N,), 1, "float16")).struct_info) == 'R.Tensor((n,), dtype="float16")'
    assert repr(bb.normalize(R.op.arange(0.0, 1.0, 0.3)).struct_info) == 'R.Tensor((4,), dtype="float32")'
    assert repr(bb.normalize(R.op.arange(N)).struct_info) == 'R.Tensor((n,), dtype="int64")'
    assert repr(bb.normalize(R.op.astype(x, "float16")).struct_info) == 'R.Tensor((n, 3), dtype="float16")'
    with pytest.raises(TypeInferenceError, match="'full' expects fill_value to be a 0-d tensor"):
        bb.normalize(R.op.full((2,), R.const([1.0, 2.0])))
    with pytest.raises(TypeInferenceError, match="'tril' expects x to have at least 2 dimensions"):
        bb.normalize(R.op.tril(R.Var("v", R.TensorStructInfo((3,), "float32"))))
    with pytest.raises(TypeInferenceError, match="'arange' expects a non-zero step"):
        bb.normalize(R.op.arange(0, 3, 0))
