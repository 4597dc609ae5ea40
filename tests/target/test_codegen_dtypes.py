"""Every dtype through code generation: elementwise add, mul, compare and casts vs numpy."""

import ml_dtypes
import numpy as np
import pytest

from graphc import tir
from graphc.ir.dtype import to_numpy_dtype

INT_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
FLOAT_DTYPES = ["float16", "float32", "float64", "bfloat16"]
ALL = ["bool", *INT_DTYPES, *FLOAT_DTYPES]


def sample(dtype, n=16, seed=0):
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.integers(0, 2, n).astype(bool)
    npd = to_numpy_dtype(dtype)
    if dtype in INT_DTYPES:
        info = np.iinfo(npd)
        return rng.integers(max(info.min, -100), min(info.max, 100), n).astype(npd)
    return (rng.standard_normal(n) * 4).astype(npd)


@pytest.mark.parametrize("dtype", [*INT_DTYPES, *FLOAT_DTYPES])
@pytest.mark.parametrize("op", ["add", "mul", "sub"])
def test_arith(dtype, op, run_ew):
    a, b = sample(dtype, seed=1), sample(dtype, seed=2)
    fn = {"add": lambda x, y: x + y, "mul": lambda x, y: x * y, "sub": lambda x, y: x - y}[op]
    got = run_ew(fn, [a, b], dtype)
    with np.errstate(over="ignore"):
        want = fn(a, b)
    if dtype in INT_DTYPES:
        np.testing.assert_array_equal(got, want)
    else:
        rtol = 1e-2 if "16" in dtype else 1e-6
        np.testing.assert_allclose(got.astype("float64"), want.astype("float64"), rtol=rtol)


@pytest.mark.parametrize("dtype", ALL)
def test_compare(dtype, run_ew):
    a, b = sample(dtype, seed=3), sample(dtype, seed=4)
    b[:4] = a[:4]  # some equal elements
    for fn in (lambda x, y: x < y, lambda x, y: x >= y, lambda x, y: x == y, lambda x, y: x != y):
        got = run_ew(lambda x, y, fn=fn: tir.convert(fn(x, y)), [a, b], "bool")
        np.testing.assert_array_equal(got, fn(a, b))


def test_bool_logic(run_ew):
    a, b = sample("bool", seed=5), sample("bool", seed=6)
    np.testing.assert_array_equal(run_ew(lambda x, y: x & y, [a, b], "bool"), a & b)
    np.testing.assert_array_equal(run_ew(lambda x, y: x | ~y, [a, b], "bool"), a | ~b)


@pytest.mark.parametrize("src", ALL)
@pytest.mark.parametrize("dst", ["bool", "int8", "int32", "uint8", "uint64", "float16", "float32",
                                 "float64", "bfloat16"])
def test_cast(src, dst, run_ew):
    a = sample(src, seed=7)
    if src in FLOAT_DTYPES and dst in INT_DTYPES + ["int8"]:
        a = np.abs(a) if dst.startswith("uint") else a  # keep float->int conversions defined
    got = run_ew(lambda x: x.astype(dst), [a], dst)
    want = a.astype(to_numpy_dtype(dst)) if not (src == "bfloat16" and dst == "bool") else a != 0
    if dst in ("float16", "bfloat16"):
        np.testing.assert_allclose(got.astype("float64"), want.astype("float64"), rtol=1e-2)
    else:
        np.testing.assert_array_equal(got, want)


def test_bfloat16_rounds_to_nearest_even(run_ew):
    # 1 + 2^-8 is halfway between two bfloat16 values: ties go to the even one (1.0)
    a = np.array([1 + 2**-8, 1 + 3 * 2**-8, np.nan, np.inf, -np.inf, 3.0e38] * 2, dtype="float32")
    got = run_ew(lambda x: x.astype("bfloat16"), [a], "bfloat16")
    want = a.astype(ml_dtypes.bfloat16)
    np.testing.assert_array_equal(got.view("uint16")[~np.isnan(a)], want.view("uint16")[~np.isnan(a)])
    assert np.isnan(got.astype("float32")[np.isnan(a)]).all()


def test_unsigned_division_and_compare_use_unsigned_semantics(run_ew):
    a = np.array([2**32 - 1, 7, 2**31] * 4, dtype="uint32")
    b = np.array([2, 2**31, 3] * 4, dtype="uint32")
    np.testing.assert_array_equal(run_ew(lambda x, y: tir.truncdiv(x, y), [a, b], "uint32"), a // b)
    np.testing.assert_array_equal(run_ew(lambda x, y: x // y, [a, b], "uint32"), a // b)
    np.testing.assert_array_equal(run_ew(lambda x, y: x % y, [a, b], "uint32"), a % b)
    got = run_ew(lambda x, y: tir.convert(x > y), [a, b], "bool")
    np.testing.assert_array_equal(got, a > b)
    np.testing.assert_array_equal(run_ew(lambda x: x.astype("float64"), [a], "float64"),
                                  a.astype("float64"))
