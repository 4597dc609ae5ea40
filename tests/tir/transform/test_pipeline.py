"""lower_pipeline / lower_primfunc: block form and lowered form agree numerically."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphc import IRModule, tir
from graphc.ir import structural_equal
from graphc.ir.transform import PassContext, PassTimingInstrument, Sequential
from graphc.tir.interpreter import run_primfunc
from graphc.tir.transform import lower_pipeline, lower_primfunc

NAMES = ["vector_add", "reduce_sum", "matmul", "two_stage", "guarded"]


def _check_lowered_form(func):
    """No blocks; every access flat; parameter buffers still N-D."""
    bad = []

    def check(node):
        if isinstance(node, tir.Block | tir.BlockRealize):
            bad.append(node)
        if isinstance(node, tir.BufferLoad | tir.BufferStore) and len(node.buffer.shape) != 1:
            bad.append(node)

    tir.post_order_visit(func.body, check)
    assert not bad


def _compare(programs, f, seed, **dims):
    ins = programs.random_inputs(f, seed=seed, **dims)
    a, b = [x.copy() for x in ins], [x.copy() for x in ins]
    lowered = lower_primfunc(f)
    _check_lowered_form(lowered)
    run_primfunc(f, *a)
    run_primfunc(lowered, *b)
    for x, y in zip(a, b):
        np.testing.assert_allclose(x, y, rtol=1e-5, atol=1e-6)
    return ins, b


@pytest.mark.parametrize("name", NAMES)
def test_block_and_lowered_forms_agree(programs, name):
    for seed in range(2):
        _compare(programs, getattr(programs, name)(), seed)


def test_results_match_numpy(programs):
    (a, b, c), (_, _, out) = _compare(programs, programs.matmul(), 0)
    np.testing.assert_allclose(out, a @ b, rtol=1e-5)
    (a, _), (_, out) = _compare(programs, programs.reduce_sum(), 0)
    np.testing.assert_allclose(out, a.sum(axis=1), rtol=1e-5)
    (a, _), (_, out) = _compare(programs, programs.guarded(), 0)
    np.testing.assert_allclose(out, a * 3, rtol=1e-6)
    (a, _), (_, out) = _compare(programs, programs.two_stage(), 0)
    np.testing.assert_allclose(out, a * 2 + 1, rtol=1e-6)


@pytest.mark.parametrize("n", [1, 5, 9])
def test_symbolic_shape_bound_from_input(programs, n):
    (a, _), (_, out) = _compare(programs, programs.symbolic(), n, n=n)
    np.testing.assert_allclose(out, a * 2 + 1, rtol=1e-6)


def test_symbolic_params_stay_in_buffer_map(programs):
    f = programs.symbolic()
    lowered = lower_primfunc(f)
    assert lowered.buffer_map == f.buffer_map and lowered.params == f.params


def test_pipeline_is_idempotent(programs):
    for name in NAMES:
        once = lower_primfunc(getattr(programs, name)())
        twice = lower_primfunc(once)
        assert structural_equal(once, twice), name


def test_pipeline_on_a_module_and_under_a_context(programs):
    mod = IRModule({"mm": programs.matmul(), "add": programs.vector_add()})
    timing = PassTimingInstrument()
    with PassContext(instruments=[timing]):
        out = lower_pipeline()(mod)
    assert set(gv.name_hint for gv in out) == {"mm", "add"}
    assert isinstance(lower_pipeline(), Sequential)
    names = [name for name, _, _ in timing.timings]
    assert names[0] == "tir.lower" and "FlattenBuffer" in names
    with PassContext(disabled_pass=["FlattenBuffer"]):
        unflat = lower_pipeline()(mod)["mm"]
    assert any(isinstance(n, tir.BufferStore) and len(n.buffer.shape) == 2 for n in _nodes(unflat.body))


def test_reduction_keeps_its_init_guard(programs):
    lowered = lower_primfunc(programs.matmul())
    ifs = [n for n in _nodes(lowered.body) if isinstance(n, tir.IfThenElse)]
    assert len(ifs) == 1


def _nodes(stmt):
    out = []
    tir.post_order_visit(stmt, out.append)
    return out


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(n=st.integers(1, 12), factor=st.integers(1, 5), seed=st.integers(0, 3))
def test_non_dividing_splits_agree(programs, n, factor, seed):
    f = programs.guarded(n, factor)
    ins = programs.random_inputs(f, seed=seed)
    a, b = [x.copy() for x in ins], [x.copy() for x in ins]
    run_primfunc(f, *a)
    run_primfunc(lower_primfunc(f), *b)
    np.testing.assert_array_equal(a[1], b[1])
    np.testing.assert_allclose(b[1], ins[0] * 3, rtol=1e-6)


def test_every_pass_leaves_the_module_well_formed(programs):
    from graphc.ir.transform import PassInstrument
    from graphc.tir.analysis import verify_well_formed

    class VerifyAfterEach(PassInstrument):
        def __init__(self):
            self.checked = []

        def run_after_pass(self, mod, info):
            assert verify_well_formed(mod), info.name
            self.checked.append(info.name)

    verifier = VerifyAfterEach()
    mod = IRModule({name: getattr(programs, name)() for name in NAMES + ["symbolic"]})
    with PassContext(instruments=[verifier]):
        lower_pipeline()(mod)
    assert verifier.checked[-1] == "tir.lower" and len(verifier.checked) == len(lower_pipeline().passes) + 1


def test_scheduled_tiles_are_allocated_per_tile_and_compacted():
    """cache_read + compute_at under bound loops: the tile lives inside the loops, tile-sized."""
    from graphc import te

    A, B = te.placeholder((16, 16), name="A"), te.placeholder((16, 16), name="B")
    k = te.reduce_axis((0, 16), name="k")
    C = te.compute((16, 16), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    sch = tir.Schedule(te.create_prim_func([A, B, C]))
    c = sch.get_block("C")
    i, j, kk = sch.get_loops(c)
    io, ii = sch.split(i, factors=[None, 4])
    jo, ji = sch.split(j, factors=[None, 4])
    ko, ki = sch.split(kk, factors=[None, 8])
    sch.reorder(io, jo, ko, ii, ji, ki)
    sch.bind(io, "blockIdx.x")
    sch.bind(jo, "blockIdx.y")
    sch.compute_at(sch.cache_read(c, 1, "shared"), ko)
    sch.reverse_compute_at(sch.cache_write(c, 0, "local"), jo)
    lowered = lower_primfunc(sch.mod["main"])
    allocs = {
        n.scope: [int(e) for e in n.extents] for n in _nodes(lowered.body) if isinstance(n, tir.Allocate)
    }
    assert allocs == {"shared": [32], "local": [16]}
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((16, 16)).astype("float32"), rng.standard_normal((16, 16)).astype("float32")
    out = np.zeros((16, 16), "float32")
    run_primfunc(lowered, a, b, out)
    np.testing.assert_allclose(out, a @ b, rtol=1e-4, atol=1e-5)


def _vectorize_by(width: int):
    """The compiler-workflow notes' custom pass: split each innermost loop whose extent `width`
    divides into an outer serial loop and an inner vectorized loop of `width` lanes."""
    from graphc.tir.functor import StmtMutator, substitute
    from graphc.tir.transform import prim_func_pass

    class Split(StmtMutator):
        def visit_For(self, op):
            op = super().visit_For(op)
            inner = [n for n in _nodes(op.body) if isinstance(n, tir.For)]
            if inner or not isinstance(op.extent, tir.IntImm) or op.extent.value % width:
                return op
            dtype = op.loop_var.dtype
            outer, lane = tir.Var(op.loop_var.name + "_o", dtype), tir.Var("lane", dtype)
            body = substitute(op.body, {op.loop_var: outer * width + lane})
            body = tir.For(lane, 0, width, tir.ForKind.VECTORIZED, body)
            return tir.For(outer, 0, op.extent.value // width, tir.ForKind.SERIAL, body)

    @prim_func_pass(opt_level=0, name="VectorizeBy")
    def vectorize(func, mod, ctx):
        body = Split().visit_stmt(func.body)
        return func if body is func.body else func.replace(body=body)

    return vectorize


def test_add_lower_pass_inserts_a_user_pass_at_its_phase():
    """`PassContext(config={"tir.add_lower_pass": [(1, pass)]})`, as in the compiler-workflow notes."""
    import graphc
    from graphc import te

    n = 128
    a, b = te.placeholder((n,), name="a"), te.placeholder((n,), name="b")
    c = te.compute((n,), lambda i: a[i] + b[i], name="c")
    s = te.create_schedule(c.op)
    vectorize = _vectorize_by(8)
    with graphc.transform.PassContext(config={"tir.add_lower_pass": [(1, vectorize)]}):
        names = [p.info.name for p in lower_pipeline().passes]
        lowered = graphc.lower(s, [a, b, c])
        lib = graphc.build(s, [a, b, c], "llvm", name="vadd")
    assert names.index("VectorizeBy") == names.index("FlattenBuffer") + 1
    loops = [node for node in _nodes(lowered["main"].body) if isinstance(node, tir.For)]
    assert [(loop.kind, int(loop.extent)) for loop in loops] == [(tir.ForKind.VECTORIZED, 8),
                                                                 (tir.ForKind.SERIAL, 16)]
    x, y, out = np.arange(n, dtype="float32"), np.ones(n, "float32"), np.zeros(n, "float32")
    lib["vadd"](x, y, out)
    np.testing.assert_array_equal(out, x + 1)
    plain = _nodes(graphc.lower(s, [a, b, c])["main"].body)  # outside the context: the plain pipeline
    assert not any(isinstance(loop, tir.For) and loop.kind == tir.ForKind.VECTORIZED for loop in plain)


@pytest.mark.parametrize("phase, after", [(0, None), (2, "UnrollLoop"), (3, "RemoveNoOp")])
def test_add_lower_pass_phases(phase, after):
    mark = _vectorize_by(8)
    with PassContext(config={"tir.add_lower_pass": [(phase, mark)]}):
        names = [p.info.name for p in lower_pipeline().passes]
    assert names.index("VectorizeBy") == (0 if after is None else names.index(after) + 1)


@pytest.mark.parametrize("entries, message", [
    ([(4, None)], "phase 4 is not one of 0, 1, 2, 3"),
    ([(1, print)], "is not a pass"),
    ([1], r"each entry is a \(phase, pass\) pair"),
    ("x", "takes a list"),
])
def test_add_lower_pass_rejects_malformed_entries(entries, message):
    from graphc.errors import GraphcError

    with PassContext(config={"tir.add_lower_pass": entries}), pytest.raises(GraphcError, match=message):
        lower_pipeline()
