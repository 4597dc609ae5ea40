"""Property tests: random elementwise, row-reduction, reduce-map chain, matrix, transpose and
convolution PrimFuncs (symbolic row counts among them), scheduled by each GPU rule that takes
them, run on PoCL and match their unscheduled CPU build. Few examples: each builds an OpenCL
program."""

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
    # 2 to 16 rows against more columns are LowBatchGEMV's (Matmul declines them)
    (cpu,), (dev,) = run_both(func, [gpu.Matmul(), gpu.LowBatchGEMV()], [2])
    np.testing.assert_allclose(dev, cpu, rtol=1e-5, atol=1e-5)


def _symbolic(rows, symbolic):
    """A `tir.Var` row count when `symbolic`, else `rows`."""
    from graphc import tir

    return tir.Var("n", "int32") if symbolic else rows


@SETTINGS
@given(rows=st.integers(1, 30), cols=st.integers(1, 70), ops=st.lists(st.sampled_from(_UNARY), min_size=1,
                                                                        max_size=2))
def test_fallback_matches_the_cpu_with_a_symbolic_row_count(rows, cols, ops):
    opencl_device()
    func = _elementwise(_symbolic(rows, True), cols, ops)
    (cpu,), (dev,) = run_both(func, [gpu.Fallback()], [2], shapes={0: (rows, cols), 2: (rows, cols)})
    np.testing.assert_allclose(dev, cpu, rtol=1e-5, atol=1e-6)


@SETTINGS
@given(rows=st.integers(1, 20), cols=st.integers(1, 600), reduce=st.sampled_from(_REDUCE),
       epilogue=st.sampled_from([None, *_UNARY]))
def test_reduction_matches_the_cpu_with_a_symbolic_row_count(rows, cols, reduce, epilogue):
    opencl_device()
    func = _row_reduction(_symbolic(rows, True), cols, reduce, epilogue)
    (cpu,), (dev,) = run_both(func, [gpu.Reduction()], [1], shapes={0: (rows, cols), 1: (rows,)})
    np.testing.assert_allclose(dev, cpu, rtol=1e-5, atol=1e-5)


def _normalize(rows, cols, first, second, op):
    """`op(A - first(A)) / second(...)` per row: softmax's and the norms' reduce, map, reduce, map chain."""
    A = te.placeholder((rows, cols), name="A")
    k1, k2 = te.reduce_axis((0, cols), "k1"), te.reduce_axis((0, cols), "k2")
    r1 = te.compute((rows,), lambda i: first(A[i, k1], axis=k1), name="r1")
    e = te.compute((rows, cols), lambda i, j: op(A[i, j] - r1[i]), name="e")
    r2 = te.compute((rows,), lambda i: second(e[i, k2], axis=k2), name="r2")
    out = te.compute((rows, cols), lambda i, j: e[i, j] / (r2[i] * r2[i] + 1.0), name="out")
    return te.create_prim_func([A, out])


@SETTINGS
@given(rows=st.integers(1, 12), cols=st.integers(1, 400), first=st.sampled_from(_REDUCE),
       second=st.sampled_from(_REDUCE), op=st.sampled_from(_UNARY[:3]),
       symbolic=st.booleans())
def test_general_reduction_matches_the_cpu_on_reduce_map_chains(rows, cols, first, second, op, symbolic):
    opencl_device()
    func = _normalize(_symbolic(rows, symbolic), cols, first, second, op)
    assert gpu.GeneralReduction().apply(func, Target("opencl"), False) is not None
    (cpu,), (dev,) = run_both(func, [gpu.GeneralReduction()], [1], shapes={0: (rows, cols), 1: (rows, cols)})
    np.testing.assert_allclose(dev, cpu, rtol=1e-4, atol=1e-5)


@SETTINGS
@given(m=st.integers(2, 16), n=st.integers(17, 200), k=st.integers(1, 300), symbolic=st.booleans(),
       epilogue=st.sampled_from([None, *_UNARY]))
def test_low_batch_gemv_matches_the_cpu_on_random_shapes(m, n, k, symbolic, epilogue):
    opencl_device()
    rows = _symbolic(m, symbolic)
    A = te.placeholder((rows, k), name="A")
    W = te.placeholder((n, k), name="W")
    r = te.reduce_axis((0, k), "r")
    C = te.compute((rows, n), lambda i, j: te.sum(A[i, r] * W[j, r], axis=r), name="C")
    out = C if epilogue is None else te.compute((rows, n), lambda i, j: epilogue(C[i, j]), name="E")
    func = te.create_prim_func([A, W, out])
    (cpu,), (dev,) = run_both(func, [gpu.LowBatchGEMV()], [2], shapes={0: (m, k), 2: (m, n)})
    np.testing.assert_allclose(dev, cpu, rtol=1e-4, atol=1e-5)


@SETTINGS
@given(shape=st.lists(st.integers(1, 50), min_size=2, max_size=4), seed=st.integers(0, 1000),
       op=st.sampled_from(_UNARY), symbolic=st.booleans())
def test_transpose_matches_the_cpu_on_random_permutations(shape, seed, op, symbolic):
    opencl_device()
    rng = np.random.default_rng(seed)
    shape = [max(s, 32) if n >= len(shape) - 2 else s for n, s in enumerate(shape)]  # long enough to tile
    perm = list(rng.permutation(len(shape)))
    if perm[-1] == len(shape) - 1:  # the innermost axis moves
        perm[-1], perm[-2] = perm[-2], perm[-1]
    dims = [_symbolic(shape[0], True) if symbolic and n == 0 else s for n, s in enumerate(shape)]
    A = te.placeholder(dims, name="A")
    out_shape = [dims[p] for p in perm]

    def body(*idx):
        src = [None] * len(idx)
        for n, p in enumerate(perm):
            src[p] = idx[n]
        return op(A[tuple(src)])

    func = te.create_prim_func([A, te.compute(out_shape, body, name="B")])
    assert gpu.Transpose().apply(func, Target("opencl"), False) is not None
    (cpu,), (dev,) = run_both(func, [gpu.Transpose()], [1], shapes={0: shape, 1: [shape[p] for p in perm]})
    np.testing.assert_allclose(dev, cpu, rtol=1e-6)


@SETTINGS
@given(c=st.integers(1, 8), o=st.integers(1, 40), size=st.integers(3, 20), k=st.sampled_from([1, 3, 5]),
       stride=st.integers(1, 2), pad=st.integers(0, 2), depthwise=st.booleans())
def test_conv2d_matches_the_cpu_on_random_convolutions(c, o, size, k, stride, pad, depthwise):
    from graphc import topi

    opencl_device()
    if depthwise:
        o = c
    if size + 2 * pad < k:
        size = k
    x = te.placeholder((2, c, size, size), name="x")
    w = te.placeholder((o, 1 if depthwise else c, k, k), name="w")
    y = topi.nn.conv2d(x, w, strides=stride, padding=pad, groups=c if depthwise else 1)
    func = te.create_prim_func([x, w, y])
    (cpu,), (dev,) = run_both(func, [gpu.Conv2d()], [2])
    np.testing.assert_allclose(dev, cpu, rtol=1e-4, atol=1e-5)
