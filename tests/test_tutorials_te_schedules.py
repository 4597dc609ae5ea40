"""The schedules of "Apache TVM - an in-depth look" (te_schedules_in_depth.md), run through graphc.

Each notebook cell's TE schedule is replayed by `te.te_schedule_to_module` and built for
"llvm"; results are checked against numpy with the symbolic m, n bound at run time to
sizes that the split factors divide and sizes they do not. The cells that bind GPU threads
are checked for their structure and for the clear error "llvm" gives for thread bindings.
"""

import numpy as np
import pytest

import graphc
from graphc import te, tir
from graphc.errors import CodegenError
from graphc.target import register_intrin_lowering
from graphc.target.intrin import _RULES
from graphc.tir import For, ForKind
from graphc.tir.functor import StmtExprVisitor, post_order_visit

SHAPES = [(37, 21), (64, 16)]  # (m, n): not divided by 32/16/8, divided


def _elementwise():
    n = te.var("n")
    m = te.var("m")
    A = te.placeholder((m, n), name="A")
    B = te.placeholder((m, n), name="B")
    C = te.compute((m, n), lambda i, j: A[i, j] * B[i, j], name="C")
    return A, B, C


def _check_elementwise(schedule, A, B, C):
    lib = graphc.build(te.te_schedule_to_module(schedule, [A, B, C]), target="llvm")
    rng = np.random.default_rng(0)
    for shape in SHAPES:
        a = rng.random(shape, dtype="float32")
        b = rng.random(shape, dtype="float32")
        c = np.zeros(shape, "float32")
        lib["main"](a, b, c)
        np.testing.assert_allclose(c, a * b, rtol=1e-6)


def _loops(mod, name="main"):
    """The loops of `mod[name]` in program order (outer before inner)."""
    found = []

    class _Loops(StmtExprVisitor):
        def visit_For(self, op):
            found.append(op)
            super().visit_For(op)

    _Loops().visit_stmt(mod[name].body)
    return found


def test_in3_base_function():
    A, B, C = _elementwise()
    schedule = te.create_schedule([C.op])
    _check_elementwise(schedule, A, B, C)


def test_in4_split():
    A, B, C = _elementwise()
    schedule = te.create_schedule([C.op])
    xo, xi = schedule[C].split(C.op.axis[0], factor=32)
    mod = te.te_schedule_to_module(schedule, [A, B, C])
    assert [str(lp.extent) for lp in _loops(mod)] == ["(m + 31) // 32", "32", "n"]
    _check_elementwise(schedule, A, B, C)


def test_in6_tile():
    A, B, C = _elementwise()
    schedule = te.create_schedule([C.op])
    xo, xi, yo, yi = schedule[C].tile(C.op.axis[0], C.op.axis[1], x_factor=16, y_factor=8)
    mod = te.te_schedule_to_module(schedule, [A, B, C])
    assert [str(lp.extent) for lp in _loops(mod)] == ["(m + 15) // 16", "(n + 7) // 8", "16", "8"]
    _check_elementwise(schedule, A, B, C)


def test_in8_fuse():
    A, B, C = _elementwise()
    schedule = te.create_schedule([C.op])
    fusedaxis = schedule[C].fuse(C.op.axis[0], C.op.axis[1])
    mod = te.te_schedule_to_module(schedule, [A, B, C])
    assert [str(lp.extent) for lp in _loops(mod)] == ["m * n"]
    assert fusedaxis.var.name == "i.j.fused"
    _check_elementwise(schedule, A, B, C)


def test_in10_bind_structure_and_llvm_error():
    A, B, C = _elementwise()
    schedule = te.create_schedule([C.op])
    co, ci = schedule[C].split(C.op.axis[0], factor=64)
    schedule[C].bind(co, te.thread_axis("blockIdx.x"))
    schedule[C].bind(ci, te.thread_axis("threadIdx.x"))
    mod = te.te_schedule_to_module(schedule, [A, B, C])
    bx, tx, j = _loops(mod)
    assert bx.kind == tx.kind == ForKind.THREAD_BINDING and j.kind == ForKind.SERIAL
    assert (bx.thread_binding.thread_tag, tx.thread_binding.thread_tag) == ("blockIdx.x", "threadIdx.x")
    assert str(bx.extent) == "(m + 63) // 64" and tx.extent.value == 64
    with pytest.raises(CodegenError, match="thread bindings need a GPU target"):
        graphc.build(mod, target="llvm")


def test_in12_reorder_tiled_axes_columns_first():
    A, B, C = _elementwise()
    schedule = te.create_schedule([C.op])
    xo, yo, xi, yi = schedule[C].tile(C.op.axis[0], C.op.axis[1], x_factor=16, y_factor=8)
    schedule[C].reorder(yo, yi, xo, xi)
    mod = te.te_schedule_to_module(schedule, [A, B, C])
    assert [str(lp.extent) for lp in _loops(mod)] == ["(n + 7) // 8", "8", "(m + 15) // 16", "16"]
    _check_elementwise(schedule, A, B, C)


def test_in16_reorder_tiled_axes_back_to_tile_order():
    A, B, C = _elementwise()
    schedule = te.create_schedule([C.op])
    xo, yo, xi, yi = schedule[C].tile(C.op.axis[0], C.op.axis[1], x_factor=16, y_factor=8)
    schedule[C].reorder(xo, yo, xi, yi)
    mod = te.te_schedule_to_module(schedule, [A, B, C])
    assert [str(lp.extent) for lp in _loops(mod)] == ["(m + 15) // 16", "(n + 7) // 8", "16", "8"]
    _check_elementwise(schedule, A, B, C)


def _op_chain():
    m = te.var("m")
    A = te.placeholder((m,), name="A")
    B = te.compute((m,), lambda i: A[i] + 1, name="B")
    C = te.compute((m,), lambda i: B[i] * 2, name="C")
    return A, B, C


def _check_chain(mod):
    lib = graphc.build(mod, target="llvm")
    for size in (1, 37):
        a = np.arange(size, dtype="float32")
        b, c = np.zeros(size, "float32"), np.zeros(size, "float32")
        lib["main"](a, b, c)
        np.testing.assert_array_equal(b, a + 1)
        np.testing.assert_array_equal(c, (a + 1) * 2)


def test_in18_op_chain_two_loops():
    A, B, C = _op_chain()
    schedule = te.create_schedule(C.op)
    mod = te.te_schedule_to_module(schedule, [A, B, C])
    assert len(_loops(mod)) == 2
    _check_chain(mod)


def test_in19_compute_at_shares_one_loop():
    A, B, C = _op_chain()
    schedule = te.create_schedule(C.op)
    schedule[B].compute_at(schedule[C], C.op.axis[0])
    mod = te.te_schedule_to_module(schedule, [A, B, C])
    (loop,) = _loops(mod)
    names = []
    post_order_visit(loop, lambda s: names.append(s.block.name_hint) if hasattr(s, "block") else None)
    assert names == ["B", "C"]
    _check_chain(mod)


def _row_sum():
    n = te.var("n")
    m = te.var("m")
    A = te.placeholder((n, m), name="A")
    k = te.reduce_axis((0, m), "k")
    B = te.compute((n,), lambda i: te.sum(A[i, k], axis=k), name="B")
    return A, B


def _check_row_sum(schedule, A, B):
    lib = graphc.build(te.te_schedule_to_module(schedule, [A, B]), target="llvm")
    rng = np.random.default_rng(1)
    for shape in ((5, 37), (3, 32), (2, 1)):
        a = rng.random(shape, dtype="float32")
        b = np.full(shape[0], 99.0, "float32")
        lib["main"](a, b)
        np.testing.assert_allclose(b, a.sum(axis=1), rtol=1e-5)


def test_in21_reduction():
    A, B = _row_sum()
    _check_row_sum(te.create_schedule(B.op), A, B)


def test_in21_reduction_split_on_reduce_axis():
    # "It is also possible to perform split and bind on reduce axis."
    A, B = _row_sum()
    schedule = te.create_schedule(B.op)
    ko, ki = schedule[B].split(B.op.reduce_axis[0], factor=16)
    mod = te.te_schedule_to_module(schedule, [A, B])
    assert [str(lp.extent) for lp in _loops(mod)] == ["n", "(m + 15) // 16", "16"]
    _check_row_sum(schedule, A, B)


def test_in21_reduction_split_and_bind_on_reduce_axis_structure():
    A, B = _row_sum()
    schedule = te.create_schedule(B.op)
    ko, ki = schedule[B].split(B.op.reduce_axis[0], factor=16)
    schedule[B].bind(B.op.axis[0], te.thread_axis("blockIdx.x"))
    schedule[B].bind(ki, te.thread_axis("threadIdx.x"))
    mod = te.te_schedule_to_module(schedule, [A, B])
    i, k_outer, k_inner = _loops(mod)
    bound = ForKind.THREAD_BINDING
    assert (i.kind, k_outer.kind, k_inner.kind) == (bound, ForKind.SERIAL, bound)
    assert k_inner.thread_binding.thread_tag == "threadIdx.x" and k_inner.extent.value == 16
    with pytest.raises(CodegenError, match="thread bindings need a GPU target"):
        graphc.build(mod, target="llvm")


def test_in22_sigmoid_split_bind():
    n = te.var("n")
    A = te.placeholder((n,), name="A")
    B = te.compute(A.shape, lambda i: te.sigmoid(A[i]), name="B")
    schedule = te.create_schedule(B.op)
    num_thread = 64
    bx, tx = schedule[B].split(B.op.axis[0], factor=num_thread)
    schedule[B].bind(bx, te.thread_axis("blockIdx.x"))
    schedule[B].bind(tx, te.thread_axis("threadIdx.x"))
    mod = te.te_schedule_to_module(schedule, [A, B], name="mysigm")
    loops = []
    post_order_visit(mod["mysigm"].body, lambda s: loops.append(s) if isinstance(s, For) else None)
    assert sorted(lp.thread_binding.thread_tag for lp in loops) == ["blockIdx.x", "threadIdx.x"]
    with pytest.raises(CodegenError, match="thread bindings need a GPU target"):
        graphc.build(mod, target="llvm")


def test_in22_sigmoid_split_on_the_cpu():
    # The same split, run on the CPU: the guard keeps the last partial block in bounds.
    n = te.var("n")
    A = te.placeholder((n,), name="A")
    B = te.compute(A.shape, lambda i: te.sigmoid(A[i]), name="B")
    schedule = te.create_schedule(B.op)
    bx, tx = schedule[B].split(B.op.axis[0], factor=64)
    lib = graphc.build(te.te_schedule_to_module(schedule, [A, B], name="mysigm"), target="llvm")
    a = np.linspace(-5, 5, 100, dtype="float32")
    b = np.zeros(100, "float32")
    lib["mysigm"](a, b)
    np.testing.assert_allclose(b, 1 / (1 + np.exp(-a)), rtol=1e-5)


def mylog(x):
    """customized log intrinsic function"""
    return tir.call_intrin(x.dtype, "tir.mylog", x)


def llvm_mylog_rule(op):
    """llvm lowering rule for log, the notebook's opencl rule verbatim"""
    if op.dtype == "float32":
        return tir.call_pure_extern("float32", "log", op.args[0])
    else:
        return op


@pytest.fixture(scope="module")
def mylog_registered():
    saved = {key: list(rules) for key, rules in _RULES.items()}
    tir.register_intrin("tir.mylog", 1)
    register_intrin_lowering("tir.mylog", target="llvm", f=llvm_mylog_rule, level=99, override=True)
    yield
    # Leave the lowering table as found: tests/target/test_intrin.py registers its own
    # tir.mylog rule at the same level in whichever worker runs both files.
    _RULES.clear()
    _RULES.update(saved)


def _mylog_schedule():
    n = te.var("n")
    A = te.placeholder((n,), name="A")
    B = te.compute(A.shape, lambda i: mylog(A[i]), name="B")
    schedule = te.create_schedule(B.op)
    num_thread = 64
    bx, tx = schedule[B].split(B.op.axis[0], factor=num_thread)
    return schedule, A, B, bx, tx


def test_in25_custom_intrinsic_mylog(mylog_registered):
    schedule, A, B, bx, tx = _mylog_schedule()
    # No thread binding: "llvm" runs the split loops serially.
    lib = graphc.build(te.te_schedule_to_module(schedule, [A, B], name="mykernel"), target="llvm")
    for size in (100, 128):
        a = np.linspace(0.5, 8, size, dtype="float32")
        b = np.zeros(size, "float32")
        lib["mykernel"](a, b)
        np.testing.assert_allclose(b, np.log(a), rtol=1e-6)


def test_in25_custom_intrinsic_with_thread_binding(mylog_registered):
    schedule, A, B, bx, tx = _mylog_schedule()
    schedule[B].bind(bx, te.thread_axis("blockIdx.x"))
    schedule[B].bind(tx, te.thread_axis("threadIdx.x"))
    mod = te.te_schedule_to_module(schedule, [A, B], name="mykernel")
    calls = []
    post_order_visit(mod["mykernel"].body, lambda e: calls.append(e.op) if hasattr(e, "op") else None)
    assert "tir.mylog" in calls
    with pytest.raises(CodegenError, match="thread bindings need a GPU target"):
        graphc.build(mod, target="llvm")
