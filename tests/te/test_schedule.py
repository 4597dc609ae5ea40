"""graphc/te/schedule: the legacy TE schedule records stage calls and replays them on tir.Schedule."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import graphc
from graphc import te
from graphc.errors import ScheduleError
from graphc.tir import ForKind
from graphc.tir.functor import StmtExprVisitor
from graphc.tir.interpreter import run_primfunc


def _chain(m=None):
    m = te.var("m") if m is None else m
    A = te.placeholder((m,), name="A")
    B = te.compute((m,), lambda i: A[i] + 1.0, name="B")
    C = te.compute((m,), lambda i: B[i] * 2.0, name="C")
    return A, B, C


def _matrix():
    m, n = te.var("m"), te.var("n")
    A = te.placeholder((m, n), name="A")
    C = te.compute((m, n), lambda i, j: A[i, j] * 3.0, name="C")
    return A, C


def _loops(mod, name="main"):
    """The loops of `mod[name]` in program order (outer before inner)."""
    found = []

    class _Loops(StmtExprVisitor):
        def visit_For(self, op):
            found.append(op)
            super().visit_For(op)

    _Loops().visit_stmt(mod[name].body)
    return found


def _run_chain(mod, sizes=(1, 7, 16)):
    lib = graphc.build(mod, target="llvm")
    for size in sizes:
        a = np.arange(size, dtype="float32")
        c = np.zeros(size, "float32")
        lib["main"](a, c)
        np.testing.assert_array_equal(c, (a + 1) * 2)


# -- create_schedule and stages ------------------------------------------------------------
def test_create_schedule_accepts_op_list_or_tensor():
    A, B, C = _chain()
    for arg in (C.op, [C.op], C, (C,)):
        s = te.create_schedule(arg)
        assert [st.op.name for st in s.stages] == ["B", "C"]
        assert s[C] is s[C.op] and s[B] is not s[C]


def test_create_schedule_errors():
    with pytest.raises(ScheduleError, match="at least one operation"):
        te.create_schedule([])
    with pytest.raises(ScheduleError, match="expected a te Tensor or operation"):
        te.create_schedule(3)


def test_stage_of_placeholder_or_foreign_op():
    A, B, C = _chain()
    other = te.compute((4,), lambda i: i * 1.0, name="other")
    s = te.create_schedule(C.op)
    with pytest.raises(ScheduleError, match=r"s\[A\]: A is a placeholder"):
        s[A]
    with pytest.raises(ScheduleError, match="other is not computed by this schedule's outputs"):
        s[other]


def test_repr_lists_the_calls():
    A, B, C = _chain()
    s = te.create_schedule(C.op)
    assert repr(s) == "<te.Schedule with no calls>"
    xo, xi = s[C].split(C.op.axis[0], nparts=4)
    s[C].bind(xo, te.thread_axis("blockIdx.x"))
    s[B].compute_at(s[C], xi)
    assert str(s).splitlines() == [
        "s[C].split(i, nparts=4)",
        "s[C].bind(i.outer, te.thread_axis('blockIdx.x'))",
        "s[B].compute_at(s[C], i.inner)",
    ]


# -- axis checks at record time --------------------------------------------------------------
def test_split_needs_exactly_one_of_factor_and_nparts():
    A, C = _matrix()
    s = te.create_schedule(C.op)
    with pytest.raises(ScheduleError, match="exactly one of factor= and nparts="):
        s[C].split(C.op.axis[0], factor=4, nparts=2)
    with pytest.raises(ScheduleError, match="exactly one of factor= and nparts="):
        s[C].split(C.op.axis[0])
    with pytest.raises(ScheduleError, match="must be positive, got 0"):
        s[C].split(C.op.axis[0], factor=0)
    assert s.calls == []


def test_unknown_axis():
    A, C = _matrix()
    s = te.create_schedule(C.op)
    stray = te.reduce_axis((0, 4), "r")
    msg = r"s\[C\].split\(r, factor=2\): axis r is not an axis of any stage"
    with pytest.raises(ScheduleError, match=msg):
        s[C].split(stray, factor=2)
    with pytest.raises(ScheduleError, match="expected an axis .* got int"):
        s[C].vectorize(0)


def test_axis_from_another_stage():
    A, B, C = _chain()
    s = te.create_schedule(C.op)
    with pytest.raises(ScheduleError, match=r"s\[C\].parallel\(i\): axis i belongs to stage B, not C"):
        s[C].parallel(B.op.axis[0])
    with pytest.raises(ScheduleError, match="axis i belongs to stage B, not C"):
        s[B].compute_at(s[C], B.op.axis[0])


def test_consumed_axes_name_what_replaced_them():
    A, C = _matrix()
    s = te.create_schedule(C.op)
    xo, xi = s[C].split(C.op.axis[0], factor=4)
    with pytest.raises(ScheduleError, match=r"axis i was split into i.outer, i.inner"):
        s[C].unroll(C.op.axis[0])
    f = s[C].fuse(xi, C.op.axis[1])
    assert f.var.name == "i.inner.j.fused" and str(f.dom.extent) == "n * 4"
    with pytest.raises(ScheduleError, match=r"axis j was fused into i.inner.j.fused"):
        s[C].reorder(C.op.axis[1], xo)


def test_split_domains():
    A = te.placeholder((10, 12), name="A")
    C = te.compute((10, 12), lambda i, j: A[i, j] + 1.0, name="C")
    s = te.create_schedule(C.op)
    xo, xi = s[C].split(C.op.axis[0], factor=4)
    yo, yi = s[C].split(C.op.axis[1], nparts=5)
    assert [a.dom.extent.value for a in (xo, xi, yo, yi)] == [3, 4, 5, 3]
    assert s[C].fuse(xo).var.name == "i.outer"  # one axis: nothing to fuse
    assert s[C].fuse(yo, yi).dom.extent.value == 15


def test_duplicates_and_bad_arguments():
    A, C = _matrix()
    s = te.create_schedule(C.op)
    i, j = C.op.axis
    with pytest.raises(ScheduleError, match="more than once"):
        s[C].reorder(j, j)
    with pytest.raises(ScheduleError, match="more than once"):
        s[C].fuse(i, i)
    with pytest.raises(ScheduleError, match="the two axes must differ"):
        s[C].tile(i, i, 4, 4)
    with pytest.raises(ScheduleError, match="expected a thread axis"):
        s[C].bind(i, te.reduce_axis((0, 4), "k"))
    with pytest.raises(ScheduleError, match="give at least one axis"):
        s[C].fuse()


def test_compute_at_checks():
    A, B, C = _chain()
    s = te.create_schedule(C.op)
    with pytest.raises(ScheduleError, match="must be a stage of this schedule"):
        s[B].compute_at(C, C.op.axis[0])
    with pytest.raises(ScheduleError, match="its own axis"):
        s[B].compute_at(s[B], B.op.axis[0])
    s[B].compute_at(s[C], C.op.axis[0])
    with pytest.raises(ScheduleError, match="already attached"):
        s[B].compute_at(s[C], C.op.axis[0])
    with pytest.raises(ScheduleError, match="is itself attached inside C"):
        s[C].compute_at(s[B], B.op.axis[0])
    with pytest.raises(ScheduleError, match="cannot be inlined too"):
        s[B].compute_inline()


def test_inlined_stage_takes_no_more_calls():
    A, B, C = _chain()
    s = te.create_schedule(C.op)
    s[B].compute_inline()
    with pytest.raises(ScheduleError, match=r"s\[B\].split\(i, factor=2\): B was inlined"):
        s[B].split(B.op.axis[0], factor=2)
    with pytest.raises(ScheduleError, match="B was inlined"):
        s[C].compute_at(s[B], B.op.axis[0])


# -- replay --------------------------------------------------------------------------------
def test_module_name_and_unscheduled_function():
    A, B, C = _chain()
    s = te.create_schedule(C.op)
    mod = te.te_schedule_to_module(s, [A, C], name="chain")
    assert [gv.name_hint for gv, _ in mod.items()] == ["chain"]
    assert mod["chain"].attrs["global_symbol"] == "chain"
    a, c = np.arange(5, dtype="float32"), np.zeros(5, "float32")
    graphc.build(mod, target="llvm")["chain"](a, c)
    np.testing.assert_array_equal(c, (a + 1) * 2)


def test_split_nparts_and_loop_kinds():
    A, C = _matrix()
    s = te.create_schedule(C.op)
    xo, xi = s[C].split(C.op.axis[0], nparts=3)
    yo, yi = s[C].split(C.op.axis[1], factor=4)
    s[C].parallel(xo)
    s[C].unroll(yo)
    s[C].vectorize(yi)
    mod = te.te_schedule_to_module(s, [A, C])
    loops = _loops(mod)
    kinds = [ForKind.PARALLEL, ForKind.SERIAL, ForKind.UNROLLED, ForKind.VECTORIZED]
    assert [lp.kind for lp in loops] == kinds
    assert loops[0].extent.value == 3 and loops[3].extent.value == 4
    lib = graphc.build(mod, target="llvm")
    for shape in ((7, 8), (9, 4)):
        a = np.random.default_rng(2).random(shape, dtype="float32")
        c = np.zeros(shape, "float32")
        lib["main"](a, c)
        np.testing.assert_allclose(c, a * 3, rtol=1e-6)


def test_fuse_then_split_then_unroll():
    A, C = _matrix()
    s = te.create_schedule(C.op)
    f = s[C].fuse(*C.op.axis)
    fo, fi = s[C].split(f, factor=8)
    s[C].unroll(fi)
    lib = graphc.build(te.te_schedule_to_module(s, [A, C]), target="llvm")
    a = np.random.default_rng(3).random((5, 7), dtype="float32")
    c = np.zeros((5, 7), "float32")
    lib["main"](a, c)
    np.testing.assert_allclose(c, a * 3, rtol=1e-6)


def test_compute_inline():
    A, B, C = _chain()
    s = te.create_schedule(C.op)
    s[B].compute_inline()
    mod = te.te_schedule_to_module(s, [A, C])
    assert len(_loops(mod)) == 1
    _run_chain(mod)


def test_producer_calls_wait_for_its_compute_at():
    # TVM applies a stage's own splits wherever it is attached, whatever the call order.
    A, B, C = _chain()
    s = te.create_schedule(C.op)
    bo, bi = s[B].split(B.op.axis[0], factor=2)
    xo, xi = s[C].split(C.op.axis[0], factor=4)
    s[B].compute_at(s[C], xo)
    s[B].unroll(bi)
    mod = te.te_schedule_to_module(s, [A, C])
    kinds = [(str(lp.extent), lp.kind) for lp in _loops(mod)]
    serial, unrolled = ForKind.SERIAL, ForKind.UNROLLED
    assert kinds == [("(m + 3) // 4", serial), ("2", serial), ("2", unrolled), ("4", serial)]
    _run_chain(mod)


def test_compute_at_chain_in_any_order():
    m = te.var("m")
    A = te.placeholder((m,), name="A")
    B = te.compute((m,), lambda i: A[i] + 1.0, name="B")
    C = te.compute((m,), lambda i: B[i] * 2.0, name="C")
    D = te.compute((m,), lambda i: C[i] - 3.0, name="D")
    s = te.create_schedule(D.op)
    s[B].compute_at(s[C], C.op.axis[0])  # recorded before C is attached to D
    s[C].compute_at(s[D], D.op.axis[0])
    mod = te.te_schedule_to_module(s, [A, D])
    assert [str(lp.extent) for lp in _loops(mod)].count("m") == 1  # B and C run inside D's loop
    a, d = np.arange(6, dtype="float32"), np.zeros(6, "float32")
    graphc.build(mod, target="llvm")["main"](a, d)
    np.testing.assert_array_equal(d, (a + 1) * 2 - 3)


def test_compute_at_reduction_producer():
    n, m = te.var("n"), te.var("m")
    A = te.placeholder((n, m), name="A")
    k = te.reduce_axis((0, m), "k")
    S = te.compute((n,), lambda i: te.sum(A[i, k], axis=k), name="S")
    D = te.compute((n,), lambda i: S[i] * 0.5, name="D")
    s = te.create_schedule(D.op)
    s[S].compute_at(s[D], D.op.axis[0])
    ko, ki = s[S].split(S.op.reduce_axis[0], factor=4)
    lib = graphc.build(te.te_schedule_to_module(s, [A, D]), target="llvm")
    a = np.random.default_rng(4).random((3, 10), dtype="float32")
    d = np.zeros(3, "float32")
    lib["main"](a, d)
    np.testing.assert_allclose(d, a.sum(axis=1) * 0.5, rtol=1e-5)


def test_replay_errors_name_the_te_call():
    A, B, C = _chain()
    s = te.create_schedule(C.op)
    xo, xi = s[C].split(C.op.axis[0], factor=4)
    s[C].vectorize(xo)
    s[C].fuse(xi, xo)  # inner before outer: tir.Schedule refuses it
    with pytest.raises(ScheduleError, match=r"^s\[C\].fuse\(i.inner, i.outer\): "):
        te.te_schedule_to_module(s, [A, C])


def test_replay_error_for_a_stage_missing_from_the_arguments():
    A, B, C = _chain()
    s = te.create_schedule(C.op)
    s[C].split(C.op.axis[0], factor=4)
    msg = r"s\[C\].split\(i, factor=4\): C is not computed by the function"
    with pytest.raises(ScheduleError, match=msg):
        te.te_schedule_to_module(s, [A, B])


def test_replay_error_for_duplicate_operation_names():
    A = te.placeholder((8,), name="A")
    B = te.compute((8,), lambda i: A[i] + 1.0, name="T")
    C = te.compute((8,), lambda i: B[i] * 2.0, name="T")
    s = te.create_schedule(C.op)
    s[C].unroll(C.op.axis[0])
    with pytest.raises(ScheduleError, match="2 operations are named 'T'"):
        te.te_schedule_to_module(s, [A, C])


def test_te_schedule_to_module_needs_a_te_schedule():
    A, B, C = _chain()
    with pytest.raises(ScheduleError, match="needs a te.create_schedule schedule"):
        te.te_schedule_to_module(graphc.tir.Schedule(te.create_prim_func([A, C])), [A, C])


def test_thread_axis_tag_string_and_domain():
    A, C = _matrix()
    s = te.create_schedule(C.op)
    s[C].bind(C.op.axis[0], "blockIdx.x")
    s[C].bind(C.op.axis[1], te.thread_axis((0, 64), "threadIdx.x"))
    tags = [lp.thread_binding.thread_tag for lp in _loops(te.te_schedule_to_module(s, [A, C]))]
    assert tags == ["blockIdx.x", "threadIdx.x"]


def test_replay_error_from_compute_at_names_the_call():
    A, B, C = _chain()
    s = te.create_schedule(C.op)
    s[C].compute_at(s[B], B.op.axis[0])  # a consumer cannot go under its producer's loop
    with pytest.raises(ScheduleError, match=r"^s\[C\].compute_at\(s\[B\], i\): cannot compute_at block 'C'"):
        te.te_schedule_to_module(s, [A, C])


# -- random schedules never change the result ----------------------------------------------
@st.composite
def _random_calls(draw):
    """A list of (kind, numbers) recipes; applied against whatever axes are current."""
    kinds = st.sampled_from(["split", "nparts", "fuse", "reorder", "unroll", "compute_at", "inline"])
    return draw(st.lists(st.tuples(kinds, st.integers(0, 7), st.integers(1, 4)), max_size=6))


def _apply(s, B, C, recipe) -> None:
    kind, pick, size = recipe
    stage = s[B] if pick % 2 and not s[B].inlined else s[C]
    leaves = stage.leaf_iter_vars
    axis = leaves[pick % len(leaves)]
    if kind == "split":
        stage.split(axis, factor=size)
    elif kind == "nparts":
        stage.split(axis, nparts=size)
    elif kind == "fuse" and len(leaves) > 1:
        k = pick % (len(leaves) - 1)
        stage.fuse(leaves[k], leaves[k + 1])
    elif kind == "reorder":
        stage.reorder(*reversed(leaves))
    elif kind == "unroll":
        stage.unroll(axis)
    elif kind == "compute_at" and s[B].attach is None and not s[B].inlined:
        s[B].compute_at(s[C], s[C].leaf_iter_vars[pick % len(s[C].leaf_iter_vars)])
    elif kind == "inline" and s[B].attach is None and not s[B].inlined:
        s[B].compute_inline()


@settings(max_examples=40, deadline=None, derandomize=True)
@given(_random_calls())
def test_random_schedules_keep_results(recipes):
    m, n = te.var("m"), te.var("n")
    A = te.placeholder((m, n), name="A")
    B = te.compute((m, n), lambda i, j: A[i, j] * 2.0, name="B")
    C = te.compute((m, n), lambda i, j: B[i, j] + A[i, j], name="C")
    s = te.create_schedule(C.op)
    for recipe in recipes:
        _apply(s, B, C, recipe)
    try:
        mod = te.te_schedule_to_module(s, [A, C])
    except ScheduleError as e:  # tir.Schedule may refuse a step; the message names the TE call
        assert str(e).startswith("s[")
        return
    a = np.arange(15, dtype="float32").reshape(5, 3)
    c = np.zeros((5, 3), "float32")
    run_primfunc(mod["main"], a, c)
    np.testing.assert_array_equal(c, a * 3)


def test_compute_at_before_the_parent_reorders_its_loops():
    # The attached nest goes under the axis wherever the parent's later calls put it.
    A = te.placeholder((6, 4), name="A")
    B = te.compute((6, 4), lambda i, j: A[i, j] + 1.0, name="B")
    C = te.compute((6, 4), lambda i, j: B[i, j] * 2.0, name="C")
    s = te.create_schedule(C.op)
    i, j = C.op.axis
    s[B].compute_at(s[C], i)
    s[C].reorder(j, i)  # replayed in this order, the nest under i would block the reorder
    mod = te.te_schedule_to_module(s, [A, C])
    assert [lp.extent.value for lp in _loops(mod)] == [4, 6]  # B's one point runs under the inner i
    a, c = np.arange(24, dtype="float32").reshape(6, 4), np.zeros((6, 4), "float32")
    run_primfunc(mod["main"], a, c)
    np.testing.assert_array_equal(c, (a + 1) * 2)


def test_calls_on_an_inlined_stage_are_dropped():
    A, B, C = _chain()
    s = te.create_schedule(C.op)
    s[B].split(B.op.axis[0], factor=4)  # would leave a T.where that blocks inlining
    s[B].compute_inline()
    mod = te.te_schedule_to_module(s, [A, C])
    assert len(_loops(mod)) == 1
    _run_chain(mod)


def test_inlining_a_stage_others_are_attached_to():
    A, B, C = _chain()
    s = te.create_schedule(C.op)
    s[B].compute_at(s[C], C.op.axis[0])
    with pytest.raises(ScheduleError, match=r"s\[C\].compute_inline\(\): B is computed at an axis of C"):
        s[C].compute_inline()


def test_compute_root_undoes_compute_at():
    A, B, C = _chain()
    s = te.create_schedule(C.op)
    s[B].compute_at(s[C], C.op.axis[0])
    s[B].compute_root()
    s[B].compute_root()  # already at the root: nothing to do
    assert s.calls == [] and s[B].attach is None
    mod = te.te_schedule_to_module(s, [A, C])
    assert len(_loops(mod)) == 2
    _run_chain(mod)


def test_unsupported_tvm_stage_methods_name_the_tir_way():
    A, B, C = _chain()
    s = te.create_schedule(C.op)
    with pytest.raises(ScheduleError, match=r"s\[C\].cache_write is not supported.*sch.cache_write"):
        s[C].cache_write("local")
    with pytest.raises(AttributeError, match="no attribute 'no_such_method'"):
        s[C].no_such_method()
