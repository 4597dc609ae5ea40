"""Property tests: random elementwise and row-reduction PrimFuncs, scheduled by each GPU rule that
takes them, run on PoCL and match their unscheduled CPU build. Few examples: each builds an
OpenCL program."""

import numpy as np
from gpu_check import opencl_device, run_both
from hypothesis import given, settings
from hypothesis import strategies as st

from graphc import te
from graphc.dlight import gpu
from graphc.target import Target

_UNARY = [lambda x: x * 2.0, lambda x: te.exp(x), lambda x: te.max(x, 0.0), lambda x: x * x + 1.0]
_REDUCE = [te.sum, te.max, te.min]
SETTINGS = settings(max_examples=5, deadline=None, derandomize=True)


def _elementwise(rows, cols, ops):
    A = te.placeholder((rows, cols), name="A")
    B = te.placeholder((cols,), name="B")
    out = A
    for n, op in enumerate(ops):
        out = te.compute((rows, cols), _step(out, op, B), name=f"E{n}")
    return te.create_prim_func([A, B, out])


def _step(prev, op, B):
    return lambda i, j: op(prev[i, j]) + B[j]


def _row_reduction(rows, cols, reduce, epilogue):
    A = te.placeholder((rows, cols), name="A")
    k = te.reduce_axis((0, cols), "k")
    R = te.compute((rows,), lambda i: reduce(A[i, k], axis=k), name="R")
    if epilogue is None:
        return te.create_prim_func([A, R])
    E = te.compute((rows,), lambda i: epilogue(R[i]), name="E")
    return te.create_prim_func([A, E])


@SETTINGS
@given(rows=st.integers(1, 40), cols=st.integers(1, 70), ops=st.lists(st.sampled_from(_UNARY), min_size=1,
                                                                        max_size=3))
def test_fallback_matches_the_cpu_on_random_elementwise_chains(rows, cols, ops):
    opencl_device()
    func = _elementwise(rows, cols, ops)
    (cpu,), (dev,) = run_both(func, [gpu.Fallback()], [2])
    np.testing.assert_allclose(dev, cpu, rtol=1e-5, atol=1e-6)


@SETTINGS
@given(rows=st.integers(1, 20), cols=st.integers(1, 600), reduce=st.sampled_from(_REDUCE),
       epilogue=st.sampled_from([None, *_UNARY]))
def test_reduction_and_fallback_match_the_cpu_on_random_row_reductions(rows, cols, reduce, epilogue):
    opencl_device()
    func = _row_reduction(rows, cols, reduce, epilogue)
    assert gpu.Reduction().apply(func, Target("opencl"), False) is not None
    for rule in (gpu.Reduction(), gpu.Fallback()):
        (cpu,), (dev,) = run_both(func, [rule], [1])
        np.testing.assert_allclose(dev, cpu, rtol=1e-5, atol=1e-5)


@SETTINGS
@given(m=st.integers(2, 40), n=st.integers(2, 40), k=st.integers(1, 50))
def test_matmul_matches_the_cpu_on_random_shapes(m, n, k):
    opencl_device()
    A = te.placeholder((m, k), name="A")
    B = te.placeholder((k, n), name="B")
    r = te.reduce_axis((0, k), "r")
    C = te.compute((m, n), lambda i, j: te.sum(A[i, r] * B[r, j], axis=r), name="C")
    func = te.create_prim_func([A, B, C])
    (cpu,), (dev,) = run_both(func, [gpu.Matmul()], [2])
    np.testing.assert_allclose(dev, cpu, rtol=1e-5, atol=1e-5)
