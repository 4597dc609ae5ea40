"""Packing A into row-tile panels: a decision of the CPU matmul space (default: not packed),
each variant numerically equal to the unscheduled build."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import graphc
from graphc import te
from graphc.ir.module import IRModule
from graphc.tir.schedule import DefaultSampler, ReplaySampler
from graphc.tune import sample_schedule, scheduled_func


def matmul(m, n, k, transposed_a=False):
    A = te.placeholder((k, m) if transposed_a else (m, k), name="A")
    B = te.placeholder((k, n), name="B")
    r = te.reduce_axis((0, k), "r")
    C = te.compute((m, n), lambda i, j: te.sum((A[r, i] if transposed_a else A[i, r]) * B[r, j], axis=r),
                   name="C")
    return te.create_prim_func([A, B, C])


def pack_decision(sch):
    """(position among the sampled decisions, instruction) of the A-packing choice, or None."""
    samples = [inst for inst in sch.trace.insts if inst.is_sample]
    found = [(k, inst) for k, inst in enumerate(samples)
             if inst.info.kind == "categorical" and inst.info.candidates == [False, True]
             and k == len(samples) - 1]
    return found[0] if found else None


def build(func):
    return graphc.build(IRModule({"main": func.with_attr("global_symbol", "main")}), target="llvm")["main"]


def test_the_default_does_not_pack_a():
    func = matmul(96, 64, 48)
    sch = sample_schedule(func, "llvm", DefaultSampler())
    k, inst = pack_decision(sch)
    assert inst.decision == 0
    assert not any("A_global" in b.name_hint for b in
                   [sch.get(b) for b in sch.get_child_blocks(sch.get_block("root"))])


@settings(max_examples=5, deadline=None, derandomize=True)
@given(rows=st.integers(1, 6), n=st.integers(5, 70), k=st.integers(3, 60), transposed=st.booleans())
def test_packed_a_variants_match_the_unscheduled_build(rows, n, k, transposed):
    func = matmul(8 * rows * 3, n, k, transposed)  # whole row tiles of 4, 6 or 8 rows
    default = sample_schedule(func, "llvm", DefaultSampler())
    found = pack_decision(default)
    if found is None:
        return  # the tile does not divide the rows: A is not offered for packing
    position, _ = found
    decisions = [d for _, d in default.trace.decisions()]
    decisions[position] = 1
    sch = sample_schedule(func, "llvm", ReplaySampler(decisions))
    names = [sch.get(b).name_hint for b in sch.get_child_blocks(sch.get_block("root"))]
    assert "A_global" in names
    rng = np.random.default_rng(0)
    arrays = [rng.uniform(-1, 1, [int(d) for d in func.buffer_map[p].shape]).astype("float32")
              for p in func.params]
    want = [a.copy() for a in arrays]
    build(func)(*want)
    got = [a.copy() for a in arrays]
    build(scheduled_func(sch))(*got)
    np.testing.assert_allclose(got[2], want[2], rtol=1e-4, atol=1e-4)
