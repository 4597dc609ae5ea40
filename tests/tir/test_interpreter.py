"""The reference TensorIR interpreter: semantics, argument checking, bounds checking."""

import numpy as np
import pytest

from graphc import tir
from graphc.errors import TIRError
from graphc.tir import BufferStore, For, ForKind, Var, const
from graphc.tir.interpreter import Interpreter, np_dtype, run_primfunc


def _func(body, *buffers, scalars=()):
    params = [Var(b.name.lower(), "handle") for b in buffers]
    return tir.PrimFunc(params + list(scalars), body, buffer_map=dict(zip(params, buffers)))


def _eval(expr, **env):
    interp = Interpreter()
    for name, value in env.items():
        interp.env[next(v for v in _vars(expr) if v.name == name)] = value
    return interp.eval(expr)


def _vars(expr):
    out = []
    tir.post_order_visit(expr, lambda n: out.append(n) if isinstance(n, Var) else None)
    return out


def test_integer_division_semantics():
    a, b = Var("a"), Var("b")
    assert _eval(tir.floordiv(a, b), a=-7, b=2) == -4
    assert _eval(tir.floormod(a, b), a=-7, b=2) == 1
    assert _eval(tir.truncdiv(a, b), a=-7, b=2) == -3
    assert _eval(tir.truncmod(a, b), a=-7, b=2) == -1


def test_float_ops_casts_and_intrinsics():
    x = Var("x", "float32")
    assert _eval(tir.exp(x), x=np.float32(0.0)) == 1.0
    assert isinstance(_eval(x * 2.0, x=np.float32(1.5)), np.float32)
    assert _eval(tir.cast(x, "int32"), x=np.float32(-2.7)) == -2
    assert _eval(tir.if_then_else(tir.convert(x > 0.0), x, -x), x=np.float32(-3.0)) == 3.0
    assert _eval(tir.max(x, 1.0), x=np.float32(0.5)) == 1.0
    assert _eval(tir.cast(Var("i") + 250, "int8"), i=10) == 4  # wraps like int8


def test_vector_expressions():
    ramp = tir.ramp(const(2), 3, 4)
    assert _eval(ramp).tolist() == [2, 5, 8, 11]
    assert _eval(tir.broadcast(const(1.5), 3)).tolist() == [1.5, 1.5, 1.5]


def test_symbolic_shape_binding_and_mismatch():
    n = Var("n")
    A, B = tir.decl_buffer((n,), "float32", "A"), tir.decl_buffer((n,), "float32", "B")
    i = Var("i")
    f = _func(For(i, const(0), n, ForKind.SERIAL, BufferStore(B, A[i] + 1.0, (i,))), A, B)
    x, y = np.arange(3, dtype="float32"), np.zeros(3, dtype="float32")
    run_primfunc(f, x, y)
    assert y.tolist() == [1, 2, 3]
    with pytest.raises(ValueError, match=r"expected n = 3 \(bound earlier\), got 4"):
        run_primfunc(f, x, np.zeros(4, dtype="float32"))


def test_argument_checks():
    A = tir.decl_buffer((4,), "float32", "A")
    f = _func(tir.Evaluate(0), A)
    with pytest.raises(ValueError, match="expects float32, got float64"):
        run_primfunc(f, np.zeros(4))
    with pytest.raises(ValueError, match="expects rank 1, got 2"):
        run_primfunc(f, np.zeros((2, 2), dtype="float32"))
    with pytest.raises(ValueError, match="dimension 0: expected 4, got 5"):
        run_primfunc(f, np.zeros(5, dtype="float32"))
    with pytest.raises(ValueError, match="missing a value"):
        run_primfunc(f)


def test_scalar_params_by_name():
    A = tir.decl_buffer((4,), "float32", "A")
    s, i = Var("s", "float32"), Var("i")
    f = _func(For(i, const(0), const(4), ForKind.SERIAL, BufferStore(A, s, (i,))), A, scalars=[s])
    x = np.zeros(4, dtype="float32")
    run_primfunc(f, x, s=2.5)
    assert x.tolist() == [2.5] * 4


def test_out_of_bounds_access_is_reported():
    A = tir.decl_buffer((4,), "float32", "A")
    i = Var("i")
    f = _func(For(i, const(0), const(5), ForKind.SERIAL, BufferStore(A, const(0.0), (i,))), A)
    with pytest.raises(TIRError, match=r"out-of-bounds access A\[4\]"):
        run_primfunc(f, np.zeros(4, dtype="float32"))


def test_allocated_memory_starts_as_nan():
    A = tir.decl_buffer((2,), "float32", "A")
    tmp = tir.decl_buffer((2,), "float32", "tmp")
    body = tir.Allocate(tmp.data, "float32", (const(2),), const(True), BufferStore(A, tmp[0], (const(0),)))
    x = np.zeros(2, dtype="float32")
    run_primfunc(_func(body, A), x)
    assert np.isnan(x[0]) and np_dtype("float32x4") == np.float32


def test_unbound_variable_and_unknown_call():
    with pytest.raises(TIRError, match="unbound variable 'q'"):
        Interpreter().eval(Var("q") + 1)
    with pytest.raises(TIRError, match="does not implement the call"):
        Interpreter().eval(tir.call_extern("int32", "puts"))
