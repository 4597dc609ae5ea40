"""Expressions through LLVM: integer division semantics, intrinsics, select/let, laziness, vectors."""

import math

import numpy as np
import pytest

from graphc import tir

INTS = np.array([-7, -6, -5, -1, 0, 1, 5, 6, 7, -2**31 + 1, 2**31 - 1, 3, -3, 9, -9, 4], dtype="int32")
DIVS = np.array([2, -2, 3, -3, 5, -5, 2, -4, 3, 7, -7, 1, -1, 4, -4, 3], dtype="int32")


@pytest.mark.parametrize("dtype", ["int8", "int32", "int64"])
def test_floor_and_trunc_division_on_negatives(dtype, run_ew):
    a = INTS.astype(dtype) if dtype != "int8" else np.clip(INTS, -100, 100).astype(dtype)
    b = DIVS.astype(dtype)
    np.testing.assert_array_equal(run_ew(lambda x, y: x // y, [a, b], dtype), a // b)
    np.testing.assert_array_equal(run_ew(lambda x, y: x % y, [a, b], dtype), a % b)
    trunc_q = [abs(x) // abs(y) * (1 if (x >= 0) == (y > 0) else -1) for x, y in zip(a.tolist(), b.tolist())]
    trunc_r = [x - y * q for x, y, q in zip(a.tolist(), b.tolist(), trunc_q)]
    np.testing.assert_array_equal(run_ew(lambda x, y: tir.truncdiv(x, y), [a, b], dtype), trunc_q)
    np.testing.assert_array_equal(run_ew(lambda x, y: tir.truncmod(x, y), [a, b], dtype), trunc_r)


def test_min_max_select_abs(run_ew):
    a, b = INTS, DIVS
    np.testing.assert_array_equal(run_ew(lambda x, y: tir.min(x, y), [a, b], "int32"), np.minimum(a, b))
    np.testing.assert_array_equal(run_ew(lambda x, y: tir.max(x, y), [a, b], "int32"), np.maximum(a, b))
    np.testing.assert_array_equal(
        run_ew(lambda x, y: tir.Select(tir.convert(x > y), x, y * 2, "int32"), [a, b], "int32"),
        np.where(a > b, a, b * 2))
    np.testing.assert_array_equal(run_ew(lambda x, y: tir.abs(y), [a, b], "int32"), np.abs(b))
    f = np.linspace(-3, 3, 16).astype("float32")
    np.testing.assert_array_equal(run_ew(lambda x: tir.max(x, 0.0), [f], "float32"), np.maximum(f, 0))


def test_let_expression(run_ew):
    a = np.arange(16, dtype="int32")
    v = tir.Var("v", "int32")
    got = run_ew(lambda x: tir.Let(v, x * 3, v * v + v, "int32"), [a], "int32")
    np.testing.assert_array_equal(got, (a * 3) ** 2 + a * 3)


UNARY = {
    "exp": np.exp, "exp2": np.exp2, "exp10": lambda x: np.power(10, x), "log": np.log,
    "log2": np.log2, "log10": np.log10, "log1p": np.log1p, "expm1": np.expm1, "sqrt": np.sqrt,
    "rsqrt": lambda x: 1 / np.sqrt(x), "tanh": np.tanh, "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "erf": lambda x: np.array([math.erf(v) for v in x], x.dtype), "sin": np.sin, "cos": np.cos,
    "tan": np.tan, "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "sinh": np.sinh,
    "cosh": np.cosh, "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh,
    "floor": np.floor, "ceil": np.ceil, "round": np.round, "nearbyint": np.rint, "trunc": np.trunc,
    "fabs": np.abs,
}  # fmt: skip
DOMAIN = {"log": (0.1, 4), "log2": (0.1, 4), "log10": (0.1, 4), "log1p": (-0.5, 4), "sqrt": (0, 4),
          "rsqrt": (0.1, 4), "asin": (-0.9, 0.9), "acos": (-0.9, 0.9), "atanh": (-0.9, 0.9),
          "acosh": (1.1, 4)}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_intrinsics_match_numpy(name, dtype, run_ew):
    lo, hi = DOMAIN.get(name, (-2.5, 2.5))
    x = np.linspace(lo, hi, 16).astype(dtype)
    x[3] = 0.5 if name not in DOMAIN else x[3]  # a rounding tie for round/nearbyint
    got = run_ew(lambda v: getattr(tir, name)(v), [x], dtype)
    tol = 2e-6 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(got, UNARY[name](x).astype(dtype), rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name, ref", [("pow", np.power), ("atan2", np.arctan2), ("fmod", np.fmod),
                                       ("hypot", np.hypot), ("copysign", np.copysign),
                                       ("nextafter", np.nextafter)])
def test_binary_intrinsics_match_numpy(name, ref, dtype, run_ew):
    x = np.linspace(0.5, 3, 16).astype(dtype)
    y = np.linspace(-2, 2, 16).astype(dtype)
    got = run_ew(lambda a, b: getattr(tir, name)(a, b), [x, y], dtype)
    np.testing.assert_allclose(got, ref(x, y), rtol=2e-6 if dtype == "float32" else 1e-12)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision_math_is_widened(dtype, run_ew):
    from graphc.ir.dtype import to_numpy_dtype

    x = np.linspace(-2, 2, 16).astype(to_numpy_dtype(dtype))
    got = run_ew(lambda v: tir.exp(v) + tir.tanh(v), [x], dtype)
    want = np.exp(x.astype("float32")) + np.tanh(x.astype("float32"))
    np.testing.assert_allclose(got.astype("float32"), want, rtol=2e-2)


def test_float_predicates_keep_ieee_semantics(run_ew):
    x = np.array([np.nan, np.inf, -np.inf, 0.0, 1.5, -2.0, np.nan, 3.0] * 2, dtype="float32")
    for name, ref in (("isnan", np.isnan), ("isinf", np.isinf), ("isfinite", np.isfinite)):
        np.testing.assert_array_equal(run_ew(lambda v, name=name: getattr(tir, name)(v), [x], "bool"), ref(x))
    got = run_ew(lambda v: tir.convert(v != v), [x], "bool")
    np.testing.assert_array_equal(got, np.isnan(x))


def test_bitwise_and_shifts(run_ew):
    a = np.array([1, -8, 255, 7] * 4, dtype="int32")
    b = np.array([1, 2, 3, 4] * 4, dtype="int32")
    np.testing.assert_array_equal(run_ew(tir.shift_left, [a, b], "int32"), a << b)
    np.testing.assert_array_equal(run_ew(tir.shift_right, [a, b], "int32"), a >> b)
    u = a.view("uint32")
    np.testing.assert_array_equal(run_ew(lambda x, y: tir.shift_right(x, y), [u, b.view("uint32")], "uint32"),
                                  u >> b.view("uint32"))
    np.testing.assert_array_equal(run_ew(tir.bitwise_xor, [a, b], "int32"), a ^ b)
    np.testing.assert_array_equal(run_ew(tir.bitwise_not, [a], "int32"), ~a)
    np.testing.assert_array_equal(run_ew(tir.popcount, [b], "int32"), [1, 1, 2, 1] * 4)


def test_reinterpret(run_ew):
    x = np.array([1.0, -2.5, np.inf, 0.0] * 4, dtype="float32")
    got = run_ew(lambda v: tir.reinterpret("int32", v), [x], "int32")
    np.testing.assert_array_equal(got, x.view("int32"))


def test_if_then_else_evaluates_only_the_taken_side(build_func):
    # out[i] = A[i + 1] if i < n - 1 else 0: the guarded load past the end must not run.
    n = 8
    A, out = tir.decl_buffer((n,), "float32", "A"), tir.decl_buffer((n,), "float32", "out")
    a, o, i = tir.Var("a", "handle"), tir.Var("o", "handle"), tir.Var("i")
    big = tir.const(1 << 28)  # an address far outside A
    value = tir.if_then_else(i < n - 1, A[i + 1], tir.if_then_else(i < 0, A[i + big], tir.const(0.0)))
    body = tir.For(i, tir.const(0), tir.const(n), tir.ForKind.SERIAL, tir.BufferStore(out, value, (i,)))
    lib = build_func(tir.PrimFunc([a, o], body, buffer_map={a: A, o: out}))
    x, y = np.arange(n, dtype="float32"), np.zeros(n, "float32")
    lib["main"](x, y)
    np.testing.assert_array_equal(y, np.append(x[1:], 0))


def test_vector_ramp_broadcast_load_store(build_func):
    # out[0:8] = A[0:8] * 2 + A[8:16:1]; out[8:16] = A[0:16:2] (a strided gather)
    A, out = tir.decl_buffer((16,), "float32", "A"), tir.decl_buffer((16,), "float32", "out")
    a, o = tir.Var("a", "handle"), tir.Var("o", "handle")
    lo, hi = tir.ramp(tir.const(0), 1, 8), tir.ramp(tir.const(8), 1, 8)
    two = tir.broadcast(tir.const(2.0), 8)
    s1 = tir.BufferStore(out, A[lo] * two + A[hi], (lo,))
    s2 = tir.BufferStore(out, A[tir.ramp(tir.const(0), 2, 8)], (hi,))
    lib = build_func(tir.PrimFunc([a, o], tir.SeqStmt((s1, s2)), buffer_map={a: A, o: out}))
    x, y = np.arange(16, dtype="float32"), np.zeros(16, "float32")
    lib["main"](x, y)
    np.testing.assert_array_equal(y[:8], x[:8] * 2 + x[8:])
    np.testing.assert_array_equal(y[8:], x[::2])


def test_call_pure_extern_reaches_libm(run_ew):
    x = np.linspace(0.1, 2, 16).astype("float64")
    got = run_ew(lambda v: tir.call_pure_extern("float64", "cbrt", v), [x], "float64")
    np.testing.assert_allclose(got, np.cbrt(x), rtol=1e-12)


@pytest.mark.parametrize("dtype", ["int8", "int32", "int64", "uint32"])
def test_division_by_zero_and_min_by_minus_one_do_not_trap(dtype, run_ew):
    info = np.iinfo(dtype)
    signed = info.min < 0
    a = np.array([7, 5, info.min if signed else 9, info.max] * 4, dtype=dtype)
    b = np.array([0, 0, -1 if signed else 0, 0] * 4, dtype=dtype)
    quotients = (lambda x, y: x // y, tir.truncdiv)
    for fn in (*quotients, lambda x, y: x % y, tir.truncmod):
        got = run_ew(fn, [a, b], dtype)
        np.testing.assert_array_equal(got[b == 0], 0)  # x / 0 is 0, as in numpy
        if signed:  # MIN / -1 wraps to MIN; MIN % -1 is 0
            np.testing.assert_array_equal(got[b == -1], info.min if fn in quotients else 0)


def test_predicated_vector_load_and_store(build_func):
    # out[0:8] = A[0:8] where lane < 5 (masked load and store); other lanes keep their value
    A, out = tir.decl_buffer((8,), "float32", "A"), tir.decl_buffer((8,), "float32", "out")
    a, o = tir.Var("a", "handle"), tir.Var("o", "handle")
    idx = tir.ramp(tir.const(0), 1, 8)
    mask = tir.convert(idx < tir.broadcast(tir.const(5), 8))
    load = tir.BufferLoad(A, (idx,), "float32x8", mask)
    store = tir.BufferStore(out, load, (idx,), mask)
    lib = build_func(tir.PrimFunc([a, o], store, buffer_map={a: A, o: out}))
    x, y = np.arange(8, dtype="float32"), np.full(8, -1.0, "float32")
    lib["main"](x, y)
    np.testing.assert_array_equal(y, [0, 1, 2, 3, 4, -1, -1, -1])


def test_vector_intrinsics_llvm_and_libm(build_func):
    # out[0:8] = exp(A[0:8]) + tanh(A[0:8]): llvm.exp on a vector, tanhf once per lane
    A, out = tir.decl_buffer((8,), "float32", "A"), tir.decl_buffer((8,), "float32", "out")
    a, o = tir.Var("a", "handle"), tir.Var("o", "handle")
    idx = tir.ramp(tir.const(0), 1, 8)
    store = tir.BufferStore(out, tir.exp(A[idx]) + tir.tanh(A[idx]), (idx,))
    lib = build_func(tir.PrimFunc([a, o], store, buffer_map={a: A, o: out}))
    x, y = np.linspace(-2, 2, 8).astype("float32"), np.zeros(8, "float32")
    lib["main"](x, y)
    np.testing.assert_allclose(y, np.exp(x) + np.tanh(x), rtol=1e-6)
