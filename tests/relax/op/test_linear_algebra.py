"""Struct info of matmul: ranks, batch broadcasting, symbolic dims, out_dtype, errors."""

import pytest

from graphc import relax, tir
from graphc.errors import TypeInferenceError

R = relax


def var(shape=None, dtype="float32", ndim=-1):
    return R.Var("x", R.TensorStructInfo(shape, dtype, ndim))


def infer(a, b, out_dtype=None):
    return repr(R.BlockBuilder().normalize(R.op.matmul(a, b, out_dtype)).struct_info)


def test_matmul_ranks():
    assert infer(var((2, 3)), var((3, 4))) == 'R.Tensor((2, 4), dtype="float32")'
    assert infer(var((3,)), var((3, 4))) == 'R.Tensor((4,), dtype="float32")'
    assert infer(var((2, 3)), var((3,))) == 'R.Tensor((2,), dtype="float32")'
    assert infer(var((3,)), var((3,))) == 'R.Tensor((), dtype="float32")'
    assert infer(var((5, 1, 2, 3)), var((7, 3, 4))) == 'R.Tensor((5, 7, 2, 4), dtype="float32")'


def test_matmul_symbolic():
    b, n, k = (tir.Var(s, "int64") for s in "bnk")
    assert infer(var((b, n, k)), var((k, 8))) == 'R.Tensor((b, n, 8), dtype="float32")'
    m = tir.Var("m", "int64")
    # k vs m cannot be decided: accepted (checked at run time), shape kept
    assert infer(var((n, k)), var((m, 8))) == 'R.Tensor((n, 8), dtype="float32")'
    assert infer(var((b, n, k)), var((m, k, 8))) == 'R.Tensor(dtype="float32", ndim=3)'


def test_matmul_out_dtype_and_unknowns():
    assert infer(var((2, 3), "float16"), var((3, 4), "float16"), "float32") == \
        'R.Tensor((2, 4), dtype="float32")'
    assert R.op.matmul(var((1,)), var((1,))).attrs.out_dtype == "void"
    assert infer(var(ndim=2), var((3, 4))) == 'R.Tensor(dtype="float32", ndim=2)'
    assert infer(var(ndim=1), var(ndim=1)) == 'R.Tensor(dtype="float32", ndim=0)'
    assert infer(var(ndim=-1), var((3, 4))) == 'R.Tensor(dtype="float32")'


def test_matmul_reduction_mismatch():
    with pytest.raises(TypeInferenceError) as err:
        infer(var((2, 3)), var((4, 5)))
    msg = str(err.value)
    assert "'matmul' expects the reduction dimensions to match" in msg
    assert 'x1 R.Tensor((2, 3), dtype="float32") has 3 columns' in msg
    assert 'x2 R.Tensor((4, 5), dtype="float32") has 4 rows' in msg


def test_matmul_errors():
    with pytest.raises(TypeInferenceError, match="'matmul' expects equal dtypes, got float32 and int8"):
        infer(var((2, 3)), var((3, 2), "int8"))
    with pytest.raises(TypeInferenceError, match=r"'matmul' expects x1 to have at least 1 dim"):
        infer(var(()), var((3, 2)))
    with pytest.raises(TypeInferenceError, match=r"'matmul' cannot broadcast .* 0 is 2 in x1 and 3 in x2"):
        infer(var((2, 4, 4)), var((3, 4, 4)))
    with pytest.raises(TypeInferenceError, match="'matmul' expects argument x2 to be a tensor"):
        infer(var((2, 3)), R.Var("s", R.ShapeStructInfo(ndim=2)))


# --- legalized numerics ---------------------------------------------------------------------

import numpy as np  # noqa: E402


@pytest.mark.parametrize("sa,sb,ra,rb", [
    ((2, 3, 4), (4, 5), (2, 3, 4), (4, 5)),
    ((tir.Var("n", "int64"), 1, 3, 4), (2, 4, 5), (3, 1, 3, 4), (2, 4, 5)),
    ((4,), (2, 4, 5), (4,), (2, 4, 5)),
])
@pytest.mark.parametrize("out_dtype", [None, "float64"])
def test_matmul_numerics(legalize_run, sa, sb, ra, rb, out_dtype):
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=ra).astype("float32"), rng.normal(size=rb).astype("float32")
    sinfos = [relax.TensorStructInfo(sa, "float32"), relax.TensorStructInfo(sb, "float32")]
    out = legalize_run(lambda x, y: relax.op.matmul(x, y, out_dtype), sinfos, [a, b], "matmul")[0]
    assert out.dtype == np.dtype(out_dtype or "float32")
    np.testing.assert_allclose(out, a.astype("float64") @ b, rtol=1e-5, atol=1e-5)
