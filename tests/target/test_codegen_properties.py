"""Property tests: integer division semantics match Python's on random inputs (one build each)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphc import IRModule, tir
from graphc.target import Target
from graphc.target.llvm import build_llvm

N = 32
OPS = {
    "floordiv": (lambda x, y: x // y, lambda p, q: p // q),
    "floormod": (lambda x, y: x % y, lambda p, q: p % q),
    "truncdiv": (tir.truncdiv, lambda p, q: abs(p) // abs(q) * (1 if (p >= 0) == (q > 0) else -1)),
    "truncmod": (tir.truncmod, lambda p, q: p - q * (abs(p) // abs(q) * (1 if (p >= 0) == (q > 0) else -1))),
}
_KERNELS: dict = {}


def _kernel(op, dtype):
    key = (op, dtype)
    if key not in _KERNELS:
        A, B, C = (tir.decl_buffer((N,), dtype, nm) for nm in "ABC")
        hs = [tir.Var(nm.lower(), "handle") for nm in "ABC"]
        i = tir.Var("i")
        body = tir.For(i, tir.const(0), tir.const(N), tir.ForKind.SERIAL,
                       tir.BufferStore(C, OPS[op][0](A[i], B[i]), (i,)))
        func = tir.PrimFunc(hs, body, buffer_map=dict(zip(hs, (A, B, C))))
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("GRAPHC_CACHE", "0")
            _KERNELS[key] = build_llvm(IRModule({"main": func}), Target("llvm"))["main"]
    return _KERNELS[key]


@pytest.mark.parametrize("dtype, bits", [("int32", 31), ("int64", 40)])
@pytest.mark.parametrize("op", sorted(OPS))
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_integer_division_matches_python(op, dtype, bits, data):
    values = st.integers(-(2**bits), 2**bits - 1)
    divisors = values.filter(lambda v: v != 0)
    a = np.array(data.draw(st.lists(values, min_size=N, max_size=N)), dtype=dtype)
    b = np.array(data.draw(st.lists(divisors, min_size=N, max_size=N)), dtype=dtype)
    c = np.zeros(N, dtype)
    _kernel(op, dtype)(a, b, c)
    want = [OPS[op][1](p, q) for p, q in zip(a.tolist(), b.tolist())]
    assert c.tolist() == want
