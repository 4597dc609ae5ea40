"""Random sequences of schedule primitives never change what a tensor program computes.

Each step draws a primitive and its arguments at random; illegal ones must raise ScheduleError
and leave the schedule exactly as it was, legal ones must preserve the program's results.
"""

import pytest
import sched_programs as P
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphc import te, tir
from graphc.tir import ScheduleError
from graphc.tir.analysis.verify_well_formed import verify_well_formed


def _broadcast_add():
    A, B = te.placeholder((4, 6), name="A"), te.placeholder((6,), name="B")
    return te.create_prim_func([A, B, te.compute((4, 6), lambda i, j: A[i, j] + B[j], name="C")])


def _conv2d():
    data, weight = te.placeholder((1, 2, 6, 6), name="data"), te.placeholder((3, 2, 3, 3), name="weight")
    rc, ry, rx = te.reduce_axis((0, 2), "rc"), te.reduce_axis((0, 3), "ry"), te.reduce_axis((0, 3), "rx")
    out = te.compute(
        (1, 3, 4, 4),
        lambda n, f, y, x: te.sum(data[n, rc, y + ry, x + rx] * weight[f, rc, ry, rx], axis=[rc, ry, rx]),
        name="conv",
    )
    return te.create_prim_func([data, weight, out])


def _softmax():
    A = te.placeholder((4, 6), name="A")
    k1, k2 = te.reduce_axis((0, 6), "k1"), te.reduce_axis((0, 6), "k2")
    mx = te.compute((4,), lambda i: te.max(A[i, k1], axis=k1), name="mx")
    e = te.compute((4, 6), lambda i, j: te.exp(A[i, j] - mx[i]), name="e")
    total = te.compute((4,), lambda i: te.sum(e[i, k2], axis=k2), name="total")
    return te.create_prim_func([A, te.compute((4, 6), lambda i, j: e[i, j] / total[i], name="out")])


PROGRAMS = {
    "broadcast": _broadcast_add,
    "conv2d": _conv2d,
    "softmax": _softmax,
    "elementwise": lambda: P.elementwise(4, 6),
    "reduction": lambda: P.row_sum(4, 6),
    "matmul": lambda: P.matmul(4, 4, 4),
    "two_stage": lambda: P.two_stage(4, 6),
    "scale_then_sum": lambda: P.scale_then_sum(4, 4),
}
OPS = [
    "split", "fuse", "reorder", "parallel", "vectorize", "unroll", "compute_inline",
    "reverse_compute_inline", "compute_at", "reverse_compute_at", "decompose_reduction", "rfactor",
    "transform_layout", "blockize", "pad_einsum", "reindex", "merge", "loop_partition",
]  # fmt: skip
LAYOUTS = {  # index maps by rank: bijective ones and ones that need padding
    1: [lambda i: (i // 2, i % 2), lambda i: (i // 4, i % 4)],
    2: [lambda i, j: (j, i), lambda i, j: (i // 2, j, i % 2), lambda i, j: (j // 4, i, j % 4)],
}


def _transform_intermediate(sch, block, data):
    """transform_layout on a buffer `block` writes that the function allocates (not a parameter)."""
    func = sch.mod["main"]
    written = [w.buffer for w in sch.get(block).writes]
    allocated = [b for b in written if b not in func.buffer_map.values()]
    if not allocated:
        return
    buf = data.draw(st.sampled_from(allocated))
    index_map = data.draw(st.sampled_from(LAYOUTS.get(len(buf.shape), [lambda *ix: ix])))
    pad = data.draw(st.sampled_from([None, 0.0]))
    sch.transform_layout(block, buf.name, index_map, pad_value=pad)


def _step(sch, data):
    blocks = sch.get_child_blocks(sch.get_block("root"))
    block = data.draw(st.sampled_from(blocks))
    loops = sch.get_loops(block)
    op = data.draw(st.sampled_from(OPS))
    if op in ("compute_inline", "reverse_compute_inline"):
        getattr(sch, op)(block)
    elif op == "transform_layout":
        _transform_intermediate(sch, block, data)
    elif op == "loop_partition" and loops:
        factors = data.draw(st.sampled_from([[1, None], [None, 2], [2, 1, None]]))
        sch.loop_partition(data.draw(st.sampled_from(loops)), factors, data.draw(st.booleans()))
    elif op == "merge":
        other_loops = sch.get_loops(data.draw(st.sampled_from(blocks)))
        if not loops or not other_loops:
            return
        sch.merge(data.draw(st.sampled_from(loops)), data.draw(st.sampled_from(other_loops)))
    elif op == "reindex":
        sch.reindex(block, (data.draw(st.sampled_from(["read", "write"])), data.draw(st.integers(0, 2))))
    elif op == "pad_einsum":
        n = len(sch.get(block).iter_vars)
        sch.pad_einsum(block, data.draw(st.lists(st.integers(1, 4), min_size=n, max_size=n)))
    elif op in ("compute_at", "reverse_compute_at"):
        other = data.draw(st.sampled_from(blocks))
        other_loops = sch.get_loops(other)
        if not other_loops:
            return
        getattr(sch, op)(block, data.draw(st.sampled_from(other_loops)))
    elif not loops:
        return
    elif op == "split":
        factor = data.draw(st.integers(1, 5))
        factors = data.draw(st.sampled_from([[None, factor], [factor, None], [None, factor, 2]]))
        sch.split(data.draw(st.sampled_from(loops)), factors=factors)
    elif op == "fuse":
        k = data.draw(st.integers(0, len(loops) - 1))
        sch.fuse(*loops[k : k + 2])
    elif op == "reorder":
        chosen = data.draw(st.permutations(loops))
        sch.reorder(*chosen[: data.draw(st.integers(1, len(chosen)))])
    elif op == "blockize":
        sch.blockize(data.draw(st.sampled_from(loops)), preserve_unit_iters=data.draw(st.booleans()))
    elif op == "rfactor":
        loop = data.draw(st.sampled_from(loops))
        sch.rfactor(loop, data.draw(st.integers(0, len(sch.get(block).writes[0].buffer.shape))))
    elif op in ("parallel", "vectorize", "decompose_reduction"):
        args = (block,) if op == "decompose_reduction" else ()
        getattr(sch, op)(*args, data.draw(st.sampled_from(loops)))
    else:
        sch.unroll(data.draw(st.sampled_from(loops)))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(sorted(PROGRAMS)), data=st.data())
def test_random_valid_schedules_preserve_results(name, data):
    f = PROGRAMS[name]()
    sch = tir.Schedule(f)
    for _ in range(data.draw(st.integers(1, 6))):
        before = P.snapshot(sch)
        try:
            _step(sch, data)
        except ScheduleError:
            P.assert_unchanged(sch, before)
    verify_well_formed(sch.mod["main"])
    P.assert_same_result(f, sch.mod["main"])
    replay = tir.Schedule(f)
    sch.trace.apply_to(replay)
    from graphc.ir import structural_equal

    assert structural_equal(replay.mod["main"], sch.mod["main"])


@pytest.mark.parametrize("primitive", ["blockize", "decompose_reduction"])
@pytest.mark.parametrize("start, legal", [(1, False), (7, False), (12, True)])
def test_init_of_a_partitioned_fused_reduction(primitive, start, legal):
    """Found by the long run: fuse a row sum's (i, k), partition the fused loop at 1 and
    blockize the second part. Its separate init reset row 0, which the first part had begun.
    Only a partition at a row boundary keeps every row's first update in one part."""
    f = PROGRAMS["reduction"]()
    sch = tir.Schedule(f)
    fused = sch.fuse(*sch.get_loops(sch.get_block("B")))
    sch.loop_partition(fused, [start, None], False)
    block = sch.get_child_blocks(sch.get_block("root"))[1]
    (loop,) = sch.get_loops(block)
    before = P.snapshot(sch)
    apply = (lambda: sch.blockize(loop)) if primitive == "blockize" else (
        lambda: sch.decompose_reduction(block, loop))
    if not legal:
        with pytest.raises(ScheduleError, match="some spatial point does not reach the reduce iters' minima"):
            apply()
        P.assert_unchanged(sch, before)
        return
    apply()
    verify_well_formed(sch.mod["main"])
    P.assert_same_result(f, sch.mod["main"])
