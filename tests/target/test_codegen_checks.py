"""Run-time checks in compiled kernels: `tir.check_index` and `tir.check_size` return early
with an error code and the values the runtime formats into IndexError / ValueError; serial,
parallel (the first failing thread's values) and vectorized loops; the TIR interpreter agrees."""

import numpy as np
import pytest

import graphc
from graphc import te, tir
from graphc.runtime.kernel import KernelError, KernelIndexError, KernelValueError
from graphc.target.llvm.vectorize import vectorize_loops
from graphc.tir.functor import post_order_visit
from graphc.tir.interpreter import run_primfunc

N = tir.Var("n", "int64")
M = tir.Var("m", "int64")
MESSAGE = "index {index} in I is out of range [{lo}, {hi}) for axis 0 of X"


def _gather(wrap: bool, rows=N, count=6, cols=4):
    X = te.placeholder((rows, cols), "float32", name="X")
    ind = te.placeholder((count,), "int64", name="I")
    out = te.compute((count, cols), lambda i, j: X[tir.check_index(ind[i], rows, wrap, MESSAGE), j], name="O")
    return te.create_prim_func([X, ind, out])


def test_builder_folds_constants_in_range_only():
    assert tir.check_index(3, 10).value == 3
    assert tir.check_index(-3, 10, True).value == 7
    kept = tir.check_index(-3, 10, False)
    assert kept.op == "tir.check_index"
    assert tir.check_size(tir.const(4, "int64"), True, "size {value}").value == 4
    with pytest.raises(graphc.errors.TIRError, match="scalar integer index"):
        tir.check_index(tir.const(1.0), 10)


def test_index_out_of_range_raises_index_error_with_value_and_range():
    lib = graphc.build(_gather(False), target="llvm")
    x = np.arange(40, dtype="float32").reshape(10, 4)
    out = np.zeros((6, 4), "float32")
    lib["main"](x, np.array([0, 9, 1, 2, 3, 4]), out)
    np.testing.assert_array_equal(out, x[[0, 9, 1, 2, 3, 4]])
    for bad in (10, -1, 10**9, -(10**18)):
        expected = rf"index {bad} in I is out of range \[0, 10\) for axis 0 of X"
        with pytest.raises(KernelIndexError, match=expected):
            lib["main"](x, np.array([0, 1, 2, bad, 4, 5]), out)
    assert issubclass(KernelIndexError, IndexError) and issubclass(KernelIndexError, KernelError)
    meta = lib["main"].meta
    assert meta["error_slots"] == 3
    assert meta["errors"][0] == {"type": "IndexError", "format": MESSAGE, "fields": ["index", "lo", "hi"]}


def test_wrapped_negative_index_counts_from_the_end_once():
    lib = graphc.build(_gather(True), target="llvm")
    x = np.arange(40, dtype="float32").reshape(10, 4)
    out = np.zeros((6, 4), "float32")
    lib["main"](x, np.array([-10, -1, 0, 9, 5, -5]), out)
    np.testing.assert_array_equal(out, x[[-10, -1, 0, 9, 5, -5]])
    for bad in (-11, 10):
        with pytest.raises(IndexError, match=rf"index {bad} in I is out of range \[-10, 10\)"):
            lib["main"](x, np.array([0, bad, 0, 0, 0, 0]), out)


def test_parallel_loop_reports_one_failing_threads_values():
    func = _gather(True, count=M)
    sch = tir.Schedule(func)
    i, _ = sch.get_loops(sch.get_block("O"))
    sch.parallel(i)  # a symbolic extent: a real parallel region, whatever the size
    lib = graphc.build(sch.mod, target="llvm")
    x = np.arange(40, dtype="float32").reshape(10, 4)
    idx = np.arange(50000) % 10 - 5
    out = np.zeros((50000, 4), "float32")
    lib["main"](x, idx, out)
    np.testing.assert_array_equal(out, x[idx])
    rng = np.random.default_rng(0)
    for _ in range(5):
        bad = idx.copy()
        positions = rng.choice(len(bad), 4, replace=False)
        bad[positions] = [11, -12, 13, 10**9]
        with pytest.raises(IndexError) as info:
            lib["main"](x, bad, out)
        value = int(str(info.value).split()[1])
        assert value in (11, -12, 13, 10**9)
        assert "out of range [-10, 10)" in str(info.value)
    lib["main"](x, idx, out)  # the kernel still works
    np.testing.assert_array_equal(out, x[idx])


def test_vectorized_loop_keeps_a_check_every_lane_shares():
    func = _gather(False, cols=64)
    sch = tir.Schedule(func)
    _, j = sch.get_loops(sch.get_block("O"))
    sch.vectorize(j)
    vector_code = vectorize_loops(graphc.lower(sch.mod)["main"].body, 256)
    ramps = []
    post_order_visit(vector_code, lambda n: ramps.append(n) if isinstance(n, tir.Ramp) else None)
    assert ramps  # the check is computed once per vector of 8 lanes, which then load and store
    lib = graphc.build(sch.mod, target="llvm")
    x = np.arange(640, dtype="float32").reshape(10, 64)
    out = np.zeros((6, 64), "float32")
    lib["main"](x, np.array([9, 0, 1, 2, 3, 4]), out)
    np.testing.assert_array_equal(out, x[[9, 0, 1, 2, 3, 4]])
    with pytest.raises(IndexError, match="index 10 in I"):
        lib["main"](x, np.array([0, 10, 1, 2, 3, 4]), out)


def test_vectorized_loop_with_a_check_per_lane_stays_correct():
    A = te.placeholder((8,), "int64", name="A")
    X = te.placeholder((5,), "float32", name="X")
    out = te.compute((8,), lambda i: X[tir.check_index(A[i], 5, False, MESSAGE)], name="O")
    sch = tir.Schedule(te.create_prim_func([X, A, out]))
    (i,) = sch.get_loops(sch.get_block("O"))
    sch.vectorize(i)
    lib = graphc.build(sch.mod, target="llvm")
    x = np.arange(5, dtype="float32")
    o = np.zeros(8, "float32")
    lib["main"](x, np.array([4, 3, 2, 1, 0, 0, 1, 2]), o)
    np.testing.assert_array_equal(o, x[[4, 3, 2, 1, 0, 0, 1, 2]])
    with pytest.raises(IndexError, match="index 5 in I"):
        lib["main"](x, np.array([4, 3, 2, 1, 0, 5, 1, 2]), o)


def test_check_size_raises_value_error():
    H = tir.decl_buffer((2,), "int64", "H")
    h = tir.Var("h", "handle")
    value = H[0] - 10
    checked = tir.check_size(value, value >= 0, "the size n - 10 = {value} is negative")
    body = tir.BufferStore(H, checked, (1,))
    lib = graphc.build(tir.PrimFunc([h], body, buffer_map={h: H}), target="llvm")
    heap = np.array([12, 0], dtype="int64")
    lib["main"](heap)
    assert heap[1] == 2
    with pytest.raises(KernelValueError, match=r"the size n - 10 = -7 is negative") as info:
        lib["main"](np.array([3, 0], dtype="int64"))
    assert isinstance(info.value, ValueError)


def test_interpreter_raises_the_same_errors():
    x = np.arange(40, dtype="float32").reshape(10, 4)
    out = np.zeros((6, 4), "float32")
    run_primfunc(_gather(True), x, np.array([0, -1, 2, 3, 4, 5]), out)
    np.testing.assert_array_equal(out, x[[0, -1, 2, 3, 4, 5]])
    with pytest.raises(IndexError, match=r"index -11 in I is out of range \[-10, 10\) for axis 0 of X"):
        run_primfunc(_gather(True), x, np.array([0, -11, 2, 3, 4, 5]), out)
