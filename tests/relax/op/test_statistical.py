"""Reductions: struct info (axis, keepdims, errors) and legalized numerics against numpy."""

import numpy as np
import pytest

from graphc import relax, tir
from graphc.errors import TypeInferenceError

R = relax
N = tir.Var("n", "int64")
SHAPES = [((2, 3, 4), (2, 3, 4)), ((N, 3, 4), (5, 3, 4))]
REDUCE = {
    "sum": np.sum,
    "mean": np.mean,
    "max": np.max,
    "min": np.min,
    "prod": np.prod,
    "variance": np.var,
    "std": np.std,
}
AXES = [(None, False), (1, False), ([0, 2], True), (-1, True)]


def infer(call):
    return repr(R.BlockBuilder().normalize(call).struct_info)


@pytest.mark.parametrize("shape,run_shape", SHAPES)
@pytest.mark.parametrize("name", sorted(REDUCE))
def test_reduce_numerics(legalize_run, name, shape, run_shape):
    x = np.random.default_rng(3).uniform(0.5, 1.5, run_shape).astype("float32")
    for axis, keepdims in AXES:
        call = lambda a: getattr(R.op, name)(a, axis=axis, keepdims=keepdims)  # noqa: E731
        out = legalize_run(call, [R.TensorStructInfo(shape, "float32")], [x], name)[0]
        np_axis = tuple(axis) if isinstance(axis, list) else axis
        np.testing.assert_allclose(
            out, REDUCE[name](x, axis=np_axis, keepdims=keepdims), rtol=2e-5, atol=1e-6
        )


@pytest.mark.parametrize("shape,run_shape", SHAPES)
@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_arg_numerics(legalize_run, name, shape, run_shape):
    x = np.random.default_rng(4).normal(size=run_shape).astype("float32")
    x[0, 0, 0] = x[0, 0, 1]  # a tie: the first index wins, as in numpy
    for axis, keepdims in [(None, False), (0, False), (2, True), (-2, False)]:
        call = lambda a: getattr(R.op, name)(a, axis=axis, keepdims=keepdims)  # noqa: E731
        out = legalize_run(call, [R.TensorStructInfo(shape, "float32")], [x], name)[0]
        ref = getattr(np, name)(x, axis=axis, keepdims=keepdims)
        assert out.dtype == np.int64
        np.testing.assert_array_equal(out, ref)


def test_integer_sum_and_max(legalize_run):
    x = np.arange(24, dtype="int32").reshape(2, 3, 4) - 10
    out = legalize_run(lambda a: R.op.sum(a, axis=[1]), [R.TensorStructInfo((N, 3, 4), "int32")], [x])[0]
    np.testing.assert_array_equal(out, x.sum(axis=1))
    out = legalize_run(lambda a: R.op.max(a), [R.TensorStructInfo((2, 3, 4), "int32")], [x])[0]
    np.testing.assert_array_equal(out, x.max())


def test_struct_info_and_errors():
    x = R.Var("x", R.TensorStructInfo((N, 3, 4), "float32"))
    assert infer(R.op.sum(x)) == 'R.Tensor((), dtype="float32")'
    assert infer(R.op.std(x, axis=[0, 1], keepdims=True)) == 'R.Tensor((1, 1, 4), dtype="float32")'
    assert infer(R.op.argmin(x, keepdims=True)) == 'R.Tensor((1, 1, 1), dtype="int64")'
    u = R.Var("u", R.TensorStructInfo(dtype="float32", ndim=3))
    assert infer(R.op.prod(u, axis=1)) == 'R.Tensor(dtype="float32", ndim=2)'
    with pytest.raises(
        TypeInferenceError, match="'mean' expects axis in \\[-3, 3\\) for a 3-d tensor, got 5"
    ):
        infer(R.op.mean(x, axis=5))
    with pytest.raises(TypeInferenceError, match="'sum' expects distinct axes"):
        infer(R.op.sum(x, axis=[1, -2]))
    for name in [*REDUCE, "argmax", "argmin"]:
        assert R.Op.get(f"relax.{name}").pattern is R.OpPatternKind.kCommReduce
