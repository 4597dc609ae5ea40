"""Unary operators: struct info, dtype checks, and legalized numerics against numpy."""

import math

import numpy as np
import pytest

from graphc import relax, tir
from graphc.errors import TypeInferenceError

R = relax
N = tir.Var("n", "int64")
SHAPES = [((2, 3, 4), (2, 3, 4)), ((N, 3), (5, 3))]  # (struct-info shape, run shape)
_erf = np.vectorize(math.erf, otypes=["float32"])

FLOAT_OPS = {
    "exp": np.exp,
    "log": np.log,
    "sqrt": np.sqrt,
    "rsqrt": lambda x: 1 / np.sqrt(x),
    "sin": np.sin,
    "cos": np.cos,
    "tan": np.tan,
    "tanh": np.tanh,
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "erf": _erf,
}
SAME_OPS = {
    "abs": np.abs,
    "negative": np.negative,
    "floor": np.floor,
    "ceil": np.ceil,
    "round": np.round,
    "sign": np.sign,
    "square": np.square,
}
POSITIVE = {"log", "sqrt", "rsqrt"}


def infer(call):
    return repr(R.BlockBuilder().normalize(call).struct_info)


def _input(name, run_shape, dtype="float32"):
    rng = np.random.default_rng(0)
    x = rng.uniform(0.1, 2.0, run_shape) if name in POSITIVE else rng.uniform(-3, 3, run_shape)
    return x.astype(dtype)


@pytest.mark.parametrize("shape,run_shape", SHAPES)
@pytest.mark.parametrize("name", sorted(FLOAT_OPS) + sorted(SAME_OPS))
def test_unary_numerics(legalize_run, name, shape, run_shape):
    ref = {**FLOAT_OPS, **SAME_OPS}[name]
    x = _input(name, run_shape)
    out = legalize_run(getattr(R.op, name), [R.TensorStructInfo(shape, "float32")], [x], f"tir_{name}")[0]
    np.testing.assert_allclose(out, ref(x), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", sorted(SAME_OPS))
def test_integer_unary_numerics(legalize_run, name):
    x = np.arange(-6, 6, dtype="int32").reshape(3, 4)
    out = legalize_run(getattr(R.op, name), [R.TensorStructInfo((N, 4), "int32")], [x])[0]
    np.testing.assert_array_equal(out, SAME_OPS[name](x).astype("int32"))


@pytest.mark.parametrize("shape,run_shape", SHAPES)
def test_predicates_and_not(legalize_run, shape, run_shape):
    x = _input("exp", run_shape)
    x.flat[0], x.flat[1], x.flat[2] = np.nan, np.inf, -np.inf
    for name, ref in (("isnan", np.isnan), ("isinf", np.isinf), ("isfinite", np.isfinite)):
        out = legalize_run(getattr(R.op, name), [R.TensorStructInfo(shape, "float32")], [x])[0]
        np.testing.assert_array_equal(out, ref(x))
    b = x > 0
    out = legalize_run(R.op.logical_not, [R.TensorStructInfo(shape, "bool")], [b], "tir_logical_not")[0]
    np.testing.assert_array_equal(out, ~b)
    i = np.arange(np.prod(run_shape), dtype="int32").reshape(run_shape)
    out = legalize_run(R.op.bitwise_not, [R.TensorStructInfo(shape, "int32")], [i])[0]
    np.testing.assert_array_equal(out, ~i)


@pytest.mark.parametrize("shape,run_shape", SHAPES)
def test_clip(legalize_run, shape, run_shape):
    x = _input("exp", run_shape)
    out = legalize_run(
        lambda a: R.op.clip(a, -1.0, 1.5), [R.TensorStructInfo(shape, "float32")], [x], "tir_clip"
    )[0]
    np.testing.assert_allclose(out, np.clip(x, -1.0, 1.5))


def test_struct_info_and_errors():
    x = R.Var("x", R.TensorStructInfo((N, 3), "float32"))
    assert infer(R.op.sqrt(x)) == 'R.Tensor((n, 3), dtype="float32")'
    assert infer(R.op.isfinite(x)) == 'R.Tensor((n, 3), dtype="bool")'
    assert (
        infer(R.op.exp(R.Var("u", R.TensorStructInfo(dtype="float32", ndim=2))))
        == 'R.Tensor(dtype="float32", ndim=2)'
    )
    i = R.Var("i", R.TensorStructInfo((3,), "int32"))
    assert infer(R.op.abs(i)) == 'R.Tensor((3,), dtype="int32")'
    with pytest.raises(TypeInferenceError, match="'sigmoid' requires x to have a float dtype"):
        infer(R.op.sigmoid(i))
    with pytest.raises(TypeInferenceError, match="'bitwise_not' requires x to have an integer dtype"):
        infer(R.op.bitwise_not(x))
    with pytest.raises(TypeInferenceError, match="'clip' expects min to be a scalar"):
        infer(R.Call(R.Op.get("relax.clip"), [x, x, R.PrimValue(1.0)]))


def test_pattern_is_elementwise():
    for name in [*FLOAT_OPS, *SAME_OPS, "isnan", "clip", "logical_not"]:
        assert R.Op.get(f"relax.{name}").pattern is R.OpPatternKind.kElemWise


# --- the rest of TVM's unary family, and graphc's precise variants ---------------------------

MORE_FLOAT_OPS = {  # name: (numpy reference, input range)
    "asin": (np.arcsin, (-0.95, 0.95)), "acos": (np.arccos, (-0.95, 0.95)), "atan": (np.arctan, (-3, 3)),
    "sinh": (np.sinh, (-3, 3)), "cosh": (np.cosh, (-3, 3)), "asinh": (np.arcsinh, (-3, 3)),
    "acosh": (np.arccosh, (1.1, 3)), "atanh": (np.arctanh, (-0.95, 0.95)),
    "log1p": (np.log1p, (-0.9, 2)), "expm1": (np.expm1, (-3, 3)), "log2": (np.log2, (0.1, 8)),
    "log10": (np.log10, (0.1, 8)), "exp2": (np.exp2, (-3, 3)),
}


@pytest.mark.parametrize("name", sorted(MORE_FLOAT_OPS))
def test_more_unary_numerics(legalize_run, name):
    ref, (lo, hi) = MORE_FLOAT_OPS[name]
    x = np.random.default_rng(1).uniform(lo, hi, (5, 3)).astype("float32")
    out = legalize_run(getattr(R.op, name), [R.TensorStructInfo((N, 3), "float32")], [x], f"tir_{name}")[0]
    np.testing.assert_allclose(out, ref(x), rtol=1e-5, atol=1e-6)


def test_precise_variants_near_zero(legalize_run):
    x = np.array([1e-7, -1e-7, 1e-4], dtype="float32")
    sinfo = [R.TensorStructInfo((3,), "float32")]
    np.testing.assert_allclose(legalize_run(R.op.expm1, sinfo, [x])[0], np.expm1(x), rtol=1e-6)
    np.testing.assert_allclose(legalize_run(R.op.log1p, sinfo, [x])[0], np.log1p(x), rtol=1e-6)


def test_erfinv_inverts_erf(legalize_run):
    x = np.array([-1.0, -0.999, -0.5, 0.0, 0.3, 0.9, 1.0], dtype="float32")
    out = legalize_run(R.op.erfinv, [R.TensorStructInfo((7,), "float32")], [x], "tir_erfinv")[0]
    assert out[0] == -np.inf and out[-1] == np.inf
    np.testing.assert_allclose(_erf(out[1:-1]), x[1:-1], rtol=1e-5, atol=1e-6)


def test_trunc_keeps_the_dtype(legalize_run):
    x = np.array([-2.5, -0.5, 0.5, 2.7], dtype="float32")
    out = legalize_run(R.op.trunc, [R.TensorStructInfo((4,), "float32")], [x], "tir_trunc")[0]
    np.testing.assert_array_equal(out, np.trunc(x))
    with pytest.raises(TypeInferenceError, match="'acos' requires x to have a float dtype"):
        infer(R.op.acos(R.Var("i", R.TensorStructInfo((3,), "int32"))))
