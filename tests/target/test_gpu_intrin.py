"""Every math intrinsic of the CPU back end, on the GPU back ends: OpenCL results match the CPU's
(same TensorIR, built for "llvm"), the CUDA lowering compiles with NVRTC, and user rules win."""

import math

import gpu_programs as P
import numpy as np
import pytest

import graphc
from graphc import IRModule, te, tir
from graphc.ir.op_attr import lowering_rules
from graphc.target.intrin import MATH_FUNCTIONS

# name -> (input range, numpy reference); each runs as out[i] = tir.<name>(a[i] [, b[i]])
UNARY = {
    "exp": ((-4, 4), np.exp), "exp2": ((-4, 4), np.exp2), "exp10": ((-2, 2), lambda x: 10.0 ** x),
    "log": ((0.1, 9), np.log), "log2": ((0.1, 9), np.log2), "log10": ((0.1, 9), np.log10),
    "log1p": ((-0.5, 4), np.log1p), "expm1": ((-2, 2), np.expm1), "sqrt": ((0, 9), np.sqrt),
    "rsqrt": ((0.1, 9), lambda x: 1 / np.sqrt(x)), "sin": ((-3, 3), np.sin), "cos": ((-3, 3), np.cos),
    "tan": ((-1, 1), np.tan), "asin": ((-0.9, 0.9), np.arcsin), "acos": ((-0.9, 0.9), np.arccos),
    "atan": ((-4, 4), np.arctan), "sinh": ((-2, 2), np.sinh), "cosh": ((-2, 2), np.cosh),
    "tanh": ((-3, 3), np.tanh), "asinh": ((-3, 3), np.arcsinh), "acosh": ((1.1, 5), np.arccosh),
    "atanh": ((-0.9, 0.9), np.arctanh), "erf": ((-2, 2), np.vectorize(math.erf)),
    "sigmoid": ((-6, 6), lambda x: 1 / (1 + np.exp(-x))), "floor": ((-3, 3), np.floor),
    "ceil": ((-3, 3), np.ceil), "round": ((-3, 3), np.round), "nearbyint": ((-3, 3), np.rint),
    "trunc": ((-3, 3), np.trunc), "fabs": ((-3, 3), np.abs),
}  # fmt: skip
BINARY = {
    "pow": ((0.5, 3), np.power), "atan2": ((-3, 3), np.arctan2), "fmod": ((0.5, 5), np.fmod),
    "hypot": ((-3, 3), np.hypot), "copysign": ((-3, 3), np.copysign), "nextafter": ((-3, 3), np.nextafter),
}  # fmt: skip
N = 64


def _func(name: str, dtype: str = "float32", bound: bool = True):
    A = te.placeholder((N,), dtype, name="A")
    B = te.placeholder((N,), dtype, name="B")
    fn = getattr(tir, name)
    if name in BINARY:
        C = te.compute((N,), lambda i: fn(A[i], B[i]), name="C")
    else:
        C = te.compute((N,), lambda i: fn(A[i]), name="C")
    sch = tir.Schedule(te.create_prim_func([A, B, C]))
    if bound:
        P.bind_spatial(sch, sch.get_block("C"), threads=32)
    return sch.mod["main"].with_attr("global_symbol", f"f_{name}")


def _inputs(name, dtype="float32"):
    lo, hi = (UNARY.get(name) or BINARY[name])[0]
    rng = np.random.default_rng(abs(hash(name)) % 1000)
    a = rng.uniform(lo, hi, N).astype(dtype)
    b = rng.uniform(lo, hi, N).astype(dtype) if name in BINARY else np.zeros(N, dtype)
    if name in ("round", "nearbyint"):
        a[:4] = [0.5, 1.5, -2.5, 2.5]  # ties go to even, as on the CPU
    return a, b


def test_every_cpu_math_intrinsic_has_gpu_lowerings():
    for name in MATH_FUNCTIONS:
        for kind in ("cuda", "opencl", "c"):
            assert lowering_rules(kind, name), f"no {kind} lowering for {name}"


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_math_on_opencl_matches_the_cpu(dtype):
    """One module with a kernel per intrinsic: built once for OpenCL and once for the CPU."""
    dev = P.opencl_device()
    names = sorted({**UNARY, **BINARY})
    if dtype == "float64":  # the same code but for the names: a sample is enough
        names = ["exp", "log1p", "erf", "tanh", "rsqrt", "round", "pow", "fmod"]
    gpu = graphc.build(IRModule({f"f_{n}": _func(n, dtype) for n in names}), target="opencl")
    cpu = graphc.build(IRModule({f"f_{n}": _func(n, dtype, bound=False) for n in names}), target="llvm")
    tol = 2e-6 if dtype == "float32" else 1e-13
    for name in names:
        a, b = _inputs(name, dtype)
        expected = np.zeros(N, dtype)
        cpu[f"f_{name}"](a, b, expected)
        out = graphc.nd.empty((N,), dtype, dev)
        gpu[f"f_{name}"](graphc.nd.array(a, dev), graphc.nd.array(b, dev), out)
        np.testing.assert_allclose(out.numpy(), expected, rtol=tol, atol=tol, err_msg=name)
        ref = (UNARY.get(name) or BINARY[name])[1]
        args = (a, b) if name in BINARY else (a,)
        np.testing.assert_allclose(out.numpy(), ref(*args).astype(dtype), rtol=1e-5, atol=1e-5, err_msg=name)


def test_every_math_intrinsic_compiles_for_cuda():
    P.require_nvrtc()
    funcs = {f"f_{n}": _func(n) for n in sorted({**UNARY, **BINARY})}
    funcs.update({f"d_{n}": _func(n, "float64").with_attr("global_symbol", f"d_{n}") for n in ("exp", "pow")})
    lib = graphc.build(IRModule(funcs), target="cuda")
    source = lib.imported_modules[0].get_source()
    for call in ("expf(", "exp10f(", "rsqrtf(", "erff(", "rintf(", "atan2f(", "nextafterf(", " exp(", "pow("):
        assert call in source, call
    assert len(lib.imported_modules[0].kernel_info) == len(funcs)


def test_user_rule_wins_over_the_builtin_lowering():
    dev = P.opencl_device()
    def native(op):
        return tir.call_pure_extern(op.dtype, "native_exp", *op.args)

    rule = graphc.ir.register_intrin_lowering("tir.exp", target="opencl", level=50, f=native)
    try:
        lib = graphc.build(_func("exp"), target="opencl")
        assert "native_exp(" in lib.imported_modules[0].get_source()
        a, b = _inputs("exp")
        out = graphc.nd.empty((N,), "float32", dev)
        lib(graphc.nd.array(a, dev), graphc.nd.array(b, dev), out)
        np.testing.assert_allclose(out.numpy(), np.exp(a), rtol=1e-3)
    finally:
        entries = lowering_rules("opencl", "tir.exp")
        entries[:] = [e for e in entries if e[1] is not rule]


def test_integer_and_predicate_intrinsics_match_the_cpu():
    """isnan/isinf/isfinite, popcount, abs, bit operations, reinterpret and the rounding integer
    divisions (negative divisors too), on OpenCL and compiled for CUDA."""
    n = 32
    A = te.placeholder((n,), "float32", name="A")
    X = te.placeholder((n,), "int32", name="X")
    U = te.placeholder((n,), "int64", name="U")

    def flags(i):
        x, v = A[i], X[i]
        kind = tir.isnan(x).astype("int32") + tir.isinf(x).astype("int32") * 2 + \
            tir.isfinite(x).astype("int32") * 4
        bits = tir.popcount(v) * 8 + tir.Cast("int32", tir.popcount(U[i])) * 1000
        ops = tir.abs(v) * 100 + tir.bitwise_and(v, 3) + tir.shift_left(v, 1) + tir.bitwise_not(v)
        return kind + bits + ops

    C = te.compute((n,), flags, name="C")
    D = te.compute((n,), lambda i: tir.reinterpret("int32", A[i]) + tir.floordiv(X[i], 7)
                   + tir.floormod(X[i], -5) + tir.truncdiv(X[i], 3), name="D")
    func = te.create_prim_func([A, X, U, C, D])
    sch = tir.Schedule(func)
    for block in ("C", "D"):
        P.bind_spatial(sch, sch.get_block(block), threads=32)
    a = np.array([np.nan, np.inf, -np.inf, 1.5] * 8, "float32")
    x = np.arange(-16, 16, dtype="int32")
    u = np.arange(n, dtype="int64") * 12345
    expected = [np.zeros(n, "int32"), np.zeros(n, "int32")]
    graphc.build(func, target="llvm")(a, x, u, *expected)
    got = P.run_opencl(sch.mod, [a, x, u, np.zeros(n, "int32"), np.zeros(n, "int32")], [3, 4])
    np.testing.assert_array_equal(got[0], expected[0])
    np.testing.assert_array_equal(got[1], expected[1])
    P.check_cubins(sch.mod)
