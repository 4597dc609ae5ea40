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
