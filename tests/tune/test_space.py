"""graphc.tune.space: the default rules as search spaces. With DefaultSampler a sampled
schedule is today's default; random decisions give kernels that compute the same values; a
stored trace re-creates its schedule on a freshly built function."""

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import graphc
from graphc import IRModule, dlight, te, tir, topi
from graphc.ir.structural import assert_structural_equal
from graphc.target import Target
from graphc.tir.schedule import DefaultSampler, RandomSampler, ReplaySampler, Schedule, ScheduleError, Trace
from graphc.tune import rule_of, sample_schedule, scheduled_func, space_size

AVX2 = Target("llvm -mcpu=x86-64 -mattr=+avx2,+fma")
AVX512 = Target("llvm -mcpu=x86-64 -mattr=+avx2,+fma,+avx512f -num-cores=2")


def matmul(m=64, n=48, k=32, epilogue=False, batch=None):
    rows = te.var("m") if m is None else m
    lead = () if batch is None else (batch,)
    A = te.placeholder((*lead, rows, k), name="A")
    B = te.placeholder((*lead, k, n), name="B")
    r = te.reduce_axis((0, k), "r")
    C = te.compute((*lead, rows, n), lambda *i: te.sum(A(*i[:-1], r) * B(*i[:-2], r, i[-1]), axis=r),
                   name="C")
    if not epilogue:
        return te.create_prim_func([A, B, C])
    bias = te.placeholder((n,), name="bias")
    D = topi.nn.gelu(te.compute(C.shape, lambda *i: C(*i) + bias(i[-1]), name="D"))
    return te.create_prim_func([A, B, bias, D])


def matmul_nt(m=30, n=36, k=40):
    """A @ B.T: B's columns are not contiguous (packing is required)."""
    A, B = te.placeholder((m, k), name="A"), te.placeholder((n, k), name="B")
    r = te.reduce_axis((0, k), "r")
    C = te.compute((m, n), lambda i, j: te.sum(A[i, r] * B[j, r], axis=r), name="C")
    return te.create_prim_func([A, B, C])


def row_sum(n=64, m=96):
    A = te.placeholder((n, m), name="A")
    k = te.reduce_axis((0, m), "k")
    return te.create_prim_func([A, te.compute((n,), lambda i: te.sum(A[i, k], axis=k), name="S")])


def col_sum(n=40, m=72):
    A = te.placeholder((n, m), name="A")
    k = te.reduce_axis((0, n), "k")
    return te.create_prim_func([A, te.compute((m,), lambda j: te.sum(A[k, j], axis=k), name="S")])


def middle_sum(b=4, n=24, m=40):
    A = te.placeholder((b, n, m), name="A")
    k = te.reduce_axis((0, n), "k")
    return te.create_prim_func([A, te.compute((b, m), lambda i, j: te.sum(A[i, k, j], axis=k), name="S")])


def softmax(n=32, m=80):
    A = te.placeholder((n, m), name="A")
    return te.create_prim_func([A, topi.nn.softmax(A, axis=1)])


def elementwise(n=128, m=200):
    A = te.placeholder((n, m), name="A")
    return te.create_prim_func([A, te.compute((n, m), lambda i, j: te.exp(A[i, j]) * 2.0, name="B")])


def conv(n=1, c=8, h=14, w=14, f=16):
    data = te.placeholder((n, c, h, w), name="data")
    weight = te.placeholder((f, c, 3, 3), name="weight")
    return te.create_prim_func([data, weight, topi.nn.conv2d(data, weight, 1, 1, 1)])


def conv_relu(n=1, c=16, h=9, w=9, f=32, stride=2):
    data = te.placeholder((n, c, h, w), name="data")
    weight = te.placeholder((f, c, 3, 3), name="weight")
    out = topi.nn.conv2d(data, weight, stride, 1, 1)
    relu = te.compute(out.shape, lambda *i: te.max(out(*i), 0.0), name="R")
    return te.create_prim_func([data, weight, relu])


def attention(b=1, h=2, s=24, d=16):
    from graphc.topi import nn

    q, k, v = (te.placeholder((b, s, h, d), name=x) for x in "qkv")
    return te.create_prim_func([q, k, v, nn.attention(q, k, v)])


PROGRAMS = {
    "matmul": matmul,
    "matmul_odd": lambda: matmul(37, 50, 29),
    "matmul_symbolic": lambda: matmul(None, 40, 24),
    "matmul_epilogue": lambda: matmul(33, 64, 48, epilogue=True),
    "matmul_batch": lambda: matmul(20, 24, 16, batch=3),
    "matmul_big": lambda: matmul(96, 256, 1024),
    "matmul_nt": matmul_nt,
    "matmul_weight": lambda: matmul(50, 72, 64).with_attr("layout_free_buffers", [1]),
    "row_sum": row_sum,
    "col_sum": col_sum,
    "softmax": softmax,
    "middle_sum": middle_sum,
    "big_rows": lambda: row_sum(512, 128),
    "elementwise": elementwise,
    "conv": conv,
    "conv_relu": conv_relu,
    "conv_wide": lambda: conv(1, 256, 6, 6, 32),
    "attention": attention,
    "attention_odd": lambda: attention(2, 2, 37, 32),
}


def build_run(func, target, inputs, m=None):
    lib = graphc.build(func, target=target)
    out_buf = func.buffer_map[func.params[-1]]
    shape = [int(d) if isinstance(d, tir.IntImm) else m for d in out_buf.shape]
    out = np.zeros(shape, "float32")
    lib["main"](*inputs, out)
    return out


def random_inputs(func, m=None, seed=0):
    rng = np.random.default_rng(seed)
    shapes = []
    for p in func.params[:-1]:
        buf = func.buffer_map[p]
        shapes.append([int(d) if isinstance(d, tir.IntImm) else m for d in buf.shape])
    return [rng.standard_normal(s).astype("float32") for s in shapes]


@pytest.mark.parametrize("name", sorted(PROGRAMS))
@pytest.mark.parametrize("target", [AVX2, AVX512], ids=["avx2", "avx512"])
def test_default_sampler_gives_todays_default(name, target):
    func = PROGRAMS[name]()
    expected = dlight.default_schedule(target)(IRModule({"main": func}))["main"]
    sch = sample_schedule(func, target, DefaultSampler())
    rule = rule_of(func, target)
    assert rule == expected.attrs["dlight.rule"]
    assert_structural_equal(scheduled_func(sch, rule), expected)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_stored_trace_recreates_the_schedule(name):
    func = PROGRAMS[name]()
    sch = sample_schedule(func, AVX512, RandomSampler(7))
    stored = Trace.from_json(json.loads(json.dumps(sch.trace.to_json())))
    assert stored.decisions() == sch.trace.decisions()
    fresh = Schedule(PROGRAMS[name]())
    stored.apply_to(fresh)
    assert_structural_equal(fresh.mod, sch.mod)


def test_replayed_decisions_rebuild_the_same_schedule():
    func = matmul(37, 50, 29)
    sch = sample_schedule(func, AVX512, RandomSampler(3))
    again = sample_schedule(func, AVX512, ReplaySampler(sch.trace.decisions()))
    assert_structural_equal(again.mod, sch.mod)


@pytest.mark.parametrize("name", ["matmul_odd", "conv_relu", "attention_odd", "softmax"])
def test_mutated_decisions_replay_to_valid_schedules(name):
    import random

    from graphc.tir.schedule import mutate_decision

    func = PROGRAMS[name]()
    base = sample_schedule(func, AVX512, DefaultSampler())
    insts = [inst for inst in base.trace.insts if inst.is_sample]
    rng = random.Random(0)
    for k, inst in enumerate(insts):
        decisions = [i.decision for i in insts]
        decisions[k] = mutate_decision(inst.info.kind, inst.decision, inst.info, rng)
        sch = sample_schedule(func, AVX512, ReplaySampler(decisions, fallback=DefaultSampler()))
        assert sch.trace.decisions()[k][1] == decisions[k]


def test_no_rule_and_bad_arguments(monkeypatch):
    import graphc.tune.space as space

    monkeypatch.setattr(space, "default_rules", lambda target: [dlight.cpu.Matmul()])
    assert sample_schedule(elementwise(), "llvm") is None
    assert rule_of(elementwise(), "llvm") is None
    monkeypatch.undo()
    with pytest.raises(TypeError, match="PrimFunc"):
        sample_schedule(IRModule({}), "llvm")
    assert space_size(elementwise(), AVX512) >= 1


_SHAPES = st.sampled_from(["matmul_odd", "matmul_symbolic", "matmul_epilogue", "matmul_batch", "matmul_nt",
                           "matmul_weight", "row_sum", "middle_sum", "big_rows", "conv_relu", "attention_odd",
                           "col_sum", "softmax", "elementwise", "conv"])  # fmt: skip


@settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck))
@given(name=_SHAPES, seed=st.integers(0, 10_000))
def test_random_decisions_compute_the_same_values(name, seed):
    func = PROGRAMS[name]()
    m = 45 if name == "matmul_symbolic" else None
    sch = sample_schedule(func, AVX2, RandomSampler(seed))
    inputs = random_inputs(func, m, seed)
    expected = build_run(func, AVX2, inputs, m)
    got = build_run(sch.mod["main"], AVX2, inputs, m)
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)
def test_a_failing_decision_is_a_schedule_error_not_another_rule():
    func = matmul(64, 48, 32)
    assert rule_of(func, AVX512) == "Matmul"
    with pytest.raises(ScheduleError, match="ReplaySampler"):
        # a decision vector that does not fit the space (no fallback) fails loudly
        sample_schedule(func, AVX512, ReplaySampler([10**6] * 8))




@pytest.mark.parametrize("shape", [(32, 64, 64), (256, 128, 512)])
def test_every_offered_matmul_blocking_choice_builds_and_computes(shape):
    """The matmul's cache-blocking decisions, one at a time: each packing location (the root,
    the task, a k block, a row tile; never inside the register tile), each parallel row chunk,
    row block (M blocking) and k block computes A @ B."""
    m, n, k = shape
    func = matmul(m=m, n=n, k=k)
    target = Target("llvm")
    samples = [i for i in sample_schedule(func, target).trace.insts if i.is_sample]
    searched = [p for p, i in enumerate(samples) if i.info.kind == "compute_location" or (
        i.info.kind == "categorical" and i.info.num_choices() >= 3
        and all(c is None or type(c) is int for c in i.info.candidates))]
    assert any(samples[p].info.kind == "compute_location" for p in searched)
    assert m < 256 or len(searched) == 4  # the location, the row chunks, the row blocks, the k block
    a = np.random.default_rng(0).random((m, k), "float32")
    b = np.random.default_rng(1).random((k, n), "float32")
    for pos in searched:
        for choice in samples[pos].info.choices():
            decisions = [i.decision for i in samples]
            decisions[pos] = choice
            sch = sample_schedule(func, target, ReplaySampler(decisions))
            mod = IRModule({"main": scheduled_func(sch).with_attr("global_symbol", "main")})
            c = np.zeros((m, n), "float32")
            graphc.build(mod, target=target)["main"](a, b, c)
            np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4, err_msg=f"decision {pos}: {choice}")
