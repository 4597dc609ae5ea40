"""Struct info of add/subtract/multiply/divide: broadcasting, symbolic dims, dtype checks."""

import pytest

from graphc import relax, tir
from graphc.errors import TypeInferenceError

R = relax
BINARY = [R.op.add, R.op.subtract, R.op.multiply, R.op.divide]


def var(shape=None, dtype="float32", ndim=-1, name="x"):
    return R.Var(name, R.TensorStructInfo(shape, dtype, ndim))


def infer(call):
    return repr(R.BlockBuilder().normalize(call).struct_info)


@pytest.mark.parametrize("fn", BINARY)
def test_static_broadcast(fn):
    assert infer(fn(var((2, 1, 4)), var((3, 1)))) == 'R.Tensor((2, 3, 4), dtype="float32")'
    assert infer(fn(var((4,)), var(()))) == 'R.Tensor((4,), dtype="float32")'


def test_call_names_the_op():
    for fn, name in zip(BINARY, ["add", "subtract", "multiply", "divide"]):
        assert fn(var((1,)), var((1,))).op.name == f"relax.{name}"


def test_symbolic_broadcast():
    n, m = tir.Var("n", "int64"), tir.Var("m", "int64")
    assert infer(R.op.add(var((n, 1)), var((1, m)))) == 'R.Tensor((n, m), dtype="float32")'
    assert infer(R.op.add(var((n * 2, 4)), var((n + n, 4)))) == 'R.Tensor((n * 2, 4), dtype="float32")'
    # n vs m cannot be decided: the rank is kept, the shape is not (as TVM does)
    assert infer(R.op.add(var((n, 4)), var((m, 4)))) == 'R.Tensor(dtype="float32", ndim=2)'
    with pytest.raises(TypeInferenceError, match=r"dimension 0 is n \+ 1 in x1 and n in x2"):
        infer(R.op.add(var((n + 1,)), var((n,))))


def test_unknown_shapes_ranks_and_dtypes():
    assert infer(R.op.add(var(ndim=2), var((3,)))) == 'R.Tensor(dtype="float32", ndim=2)'
    assert infer(R.op.add(var(ndim=-1), var((3,)))) == 'R.Tensor(dtype="float32")'
    assert infer(R.op.add(var((3,), dtype=""), var((3,)))) == "R.Tensor((3,))"


def test_shape_mismatch_error_names_everything():
    with pytest.raises(TypeInferenceError) as err:
        infer(R.op.multiply(var((2, 3)), var((4, 3), name="y")))
    msg = str(err.value)
    assert msg.startswith("'multiply' cannot broadcast x1 R.Tensor((2, 3)")
    assert 'x2 R.Tensor((4, 3), dtype="float32")' in msg and "dimension 0 is 2 in x1 and 4 in x2" in msg


def test_dtype_mismatch_error():
    with pytest.raises(TypeInferenceError) as err:
        infer(R.op.add(var((4, 16)), var((4, 16), "float16")))
    msg = str(err.value)
    assert "'add' expects equal dtypes, got float32 and float16" in msg
    assert 'x1 is R.Tensor((4, 16), dtype="float32")' in msg
    assert 'x2 is R.Tensor((4, 16), dtype="float16")' in msg


def test_non_tensor_argument_error():
    s = R.Var("s", R.ShapeStructInfo((2,)))
    with pytest.raises(TypeInferenceError, match=r"'subtract' expects argument x2 to be a tensor .* R.Shape"):
        infer(R.op.subtract(var((2,)), s))


# --- the full binary family: struct info and legalized numerics ------------------------------

import numpy as np  # noqa: E402

N = tir.Var("n", "int64")
BROADCAST_CASES = [  # (x1 shape, x2 shape, run shapes)
    ((2, 1, 4), (3, 1), ((2, 1, 4), (3, 1))),
    ((N, 4), (4,), ((5, 4), (4,))),
]
ARITH = {
    "add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": np.divide,
    "floor_divide": np.floor_divide, "power": np.power, "maximum": np.maximum, "minimum": np.minimum,
    "mod": np.fmod, "floor_mod": np.mod,
}
COMPARE = {
    "equal": np.equal, "not_equal": np.not_equal, "less": np.less, "less_equal": np.less_equal,
    "greater": np.greater, "greater_equal": np.greater_equal,
}


def _operands(s1, s2, dtype="float32", low=0.5):
    rng = np.random.default_rng(1)
    a, b = rng.uniform(low, 3, s1), rng.uniform(low, 3, s2)
    if dtype.startswith("int"):
        a, b = rng.integers(-7, 8, s1), rng.integers(1, 5, s2)
    return a.astype(dtype), b.astype(dtype)


@pytest.mark.parametrize("x1,x2,runs", BROADCAST_CASES)
@pytest.mark.parametrize("name", sorted(ARITH))
def test_arith_numerics(legalize_run, name, x1, x2, runs):
    a, b = _operands(*runs)
    sinfos = [R.TensorStructInfo(x1, "float32"), R.TensorStructInfo(x2, "float32")]
    out = legalize_run(getattr(R.op, name), sinfos, [a, b], name)[0]
    np.testing.assert_allclose(out, ARITH[name](a, b), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["add", "multiply", "floor_divide", "floor_mod", "mod", "maximum", "power"])
def test_integer_arith_numerics(legalize_run, name):
    a, b = _operands((5, 4), (4,), "int32")
    b[b == 0] = 1
    sinfos = [R.TensorStructInfo((N, 4), "int32"), R.TensorStructInfo((4,), "int32")]
    out = legalize_run(getattr(R.op, name), sinfos, [a, b])[0]
    np.testing.assert_array_equal(out, ARITH[name](a, b))


@pytest.mark.parametrize("x1,x2,runs", BROADCAST_CASES)
def test_compare_logical_bitwise_numerics(legalize_run, x1, x2, runs):
    a, b = _operands(*runs)
    b.flat[0] = a.flat[0]
    f32 = [R.TensorStructInfo(x1, "float32"), R.TensorStructInfo(x2, "float32")]
    for name, ref in COMPARE.items():
        out = legalize_run(getattr(R.op, name), f32, [a, b], name)[0]
        assert out.dtype == np.bool_
        np.testing.assert_array_equal(out, ref(a, b))
    p, q = a > 1.5, b > 1.5
    bools = [R.TensorStructInfo(x1, "bool"), R.TensorStructInfo(x2, "bool")]
    for name, ref in (("logical_and", np.logical_and), ("logical_or", np.logical_or),
                      ("logical_xor", np.logical_xor)):
        np.testing.assert_array_equal(legalize_run(getattr(R.op, name), bools, [p, q])[0], ref(p, q))
    i, j = (a * 10).astype("int32"), (b * 10).astype("int32")
    ints = [R.TensorStructInfo(x1, "int32"), R.TensorStructInfo(x2, "int32")]
    for name, ref in (("bitwise_and", np.bitwise_and), ("bitwise_or", np.bitwise_or),
                      ("bitwise_xor", np.bitwise_xor)):
        np.testing.assert_array_equal(legalize_run(getattr(R.op, name), ints, [i, j])[0], ref(i, j))


@pytest.mark.parametrize("c,x1,x2,runs", [
    ((2, 1), (3,), (2, 3), ((2, 1), (3,), (2, 3))),
    ((N, 1), (N, 3), (3,), ((4, 1), (4, 3), (3,))),
])
def test_where_numerics(legalize_run, c, x1, x2, runs):
    rng = np.random.default_rng(2)
    cond = rng.uniform(size=runs[0]) > 0.5
    a, b = rng.normal(size=runs[1]).astype("float32"), rng.normal(size=runs[2]).astype("float32")
    sinfos = [R.TensorStructInfo(c, "bool"), R.TensorStructInfo(x1, "float32"),
              R.TensorStructInfo(x2, "float32")]
    out = legalize_run(R.op.where, sinfos, [cond, a, b], "where")[0]
    np.testing.assert_array_equal(out, np.where(cond, a, b))


def test_family_struct_info_and_errors():
    x, y = var((N, 1)), var((4,), name="y")
    assert infer(R.op.greater_equal(x, y)) == 'R.Tensor((n, 4), dtype="bool")'
    assert infer(R.op.power(x, y)) == 'R.Tensor((n, 4), dtype="float32")'
    b = var((2,), "bool", name="b")
    assert infer(R.op.logical_xor(b, b)) == 'R.Tensor((2,), dtype="bool")'
    with pytest.raises(TypeInferenceError, match="'logical_and' requires bool operands"):
        infer(R.op.logical_and(x, y))
    with pytest.raises(TypeInferenceError, match="'bitwise_or' requires integer operands"):
        infer(R.op.bitwise_or(x, y))
    with pytest.raises(TypeInferenceError, match="'maximum' expects equal dtypes, got float32 and int32"):
        infer(R.op.maximum(x, var((4,), "int32")))
    with pytest.raises(TypeInferenceError, match="'where' expects condition to be a bool tensor"):
        infer(R.op.where(x, x, x))
    with pytest.raises(TypeInferenceError, match="'where' cannot broadcast condition"):
        infer(R.op.where(var((3,), "bool"), var((2,)), var((2,))))
    for name in [*ARITH, *COMPARE, "where"]:
        assert R.Op.get(f"relax.{name}").pattern is R.OpPatternKind.kBroadcast


def test_shifts_and_float_functions_numerics(legalize_run):
    a = np.array([[1, 2, 3], [-8, 16, 5]], dtype="int32")
    s = np.array([1, 2, 3], dtype="int32")
    sinfos = [R.TensorStructInfo((N, 3), "int32"), R.TensorStructInfo((3,), "int32")]
    np.testing.assert_array_equal(legalize_run(R.op.left_shift, sinfos, [a, s], "left_shift")[0], a << s)
    np.testing.assert_array_equal(legalize_run(R.op.right_shift, sinfos, [a, s], "right_shift")[0], a >> s)
    x = np.array([[1.0, -2.0, 0.5], [-0.0, 3.0, -4.0]], dtype="float32")
    y = np.array([-1.0, 2.0, -0.0], dtype="float32")
    fsinfos = [R.TensorStructInfo((N, 3), "float32"), R.TensorStructInfo((3,), "float32")]
    for name, ref in (("atan2", np.arctan2), ("hypot", np.hypot), ("copysign", np.copysign)):
        out = legalize_run(getattr(R.op, name), fsinfos, [x, y], name)[0]
        np.testing.assert_allclose(out, ref(x, y), rtol=1e-6)
    with pytest.raises(TypeInferenceError, match="'atan2' requires operands of a float dtype"):
        infer(R.op.atan2(var((3,), "int32"), var((3,), "int32")))
    with pytest.raises(TypeInferenceError, match="'left_shift' requires integer operands"):
        infer(R.op.left_shift(var((3,)), var((3,))))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("exponent", [1.0, 2.0, 3.0, 4.0, 2.5, -1.0])
def test_power_by_a_scalar_constant(legalize_run, exponent, dtype):
    # a whole exponent in 1..4 goes into the compute as a literal (multiplications when built
    # for the CPU), any other stays an operand; the numbers agree with numpy's either way
    a = np.random.default_rng(2).uniform(-3, 3, (5, 7)).astype(dtype)
    a[0, :4] = [0.0, -0.0, np.inf, -np.inf]
    if exponent == 2.5:
        a = np.abs(a)
    c = R.const(exponent, dtype)
    out = legalize_run(lambda x: R.op.power(x, c), [R.TensorStructInfo((N, 7), dtype)], [a], "power")[0]
    with np.errstate(divide="ignore"):  # 0 ** -1
        want = np.power(a, np.array(exponent, dtype))
    np.testing.assert_array_equal(np.isinf(out), np.isinf(want))
    finite = np.isfinite(want)
    np.testing.assert_array_max_ulp(out[finite], want[finite], maxulp=2)
    mod = R.transform.LegalizeOps()(_power_module(c, dtype))
    params = [f for f in mod.functions.values() if isinstance(f, tir.PrimFunc)][0].params
    assert len(params) == (2 if exponent in (1.0, 2.0, 3.0, 4.0) else 3)


def _power_module(c, dtype):
    x = R.Var("x", R.TensorStructInfo((4,), dtype))
    bb = R.BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            gv = bb.emit_output(R.op.power(x, c))
        bb.emit_func_output(gv)
    return bb.get()
