"""The sampling instructions (sample_perfect_tile, sample_categorical, sample_compute_location),
the samplers, trace replay and the JSON form of traces."""

import json
import math
import random

import numpy as np
import pytest

import graphc
from graphc import te, tir
from graphc.ir.structural import assert_structural_equal
from graphc.tir.schedule import (
    DefaultSampler,
    RandomSampler,
    ReplaySampler,
    SampleInfo,
    Schedule,
    ScheduleError,
    Trace,
    mutate_decision,
    use_sampler,
)


def scale(n=96):
    A = te.placeholder((n,), name="A")
    B = te.compute((n,), lambda i: A[i] * 2.0, name="B")
    return te.create_prim_func([A, B])


def two_stage(n=16, m=24):
    A = te.placeholder((n, m), name="A")
    B = te.compute((n, m), lambda i, j: A[i, j] * 2.0, name="B")
    C = te.compute((n, m), lambda i, j: B[i, j] + 1.0, name="C")
    return te.create_prim_func([A, C])


def symbolic():
    n = tir.Var("n")
    A = te.placeholder((n,), name="A")
    B = te.compute((n,), lambda i: A[i] + 1.0, name="B")
    return te.create_prim_func([A, B])


def run(func, *shapes):
    args = [np.random.default_rng(0).standard_normal(s).astype("float32") for s in shapes]
    graphc.build(func, target="llvm")["main"](*args)
    return args[-1]


# -- sample_perfect_tile --------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(4))
def test_perfect_tile_values_are_valid_and_reproducible(seed):
    def sample(seed):
        sch = Schedule(scale(), sampler=RandomSampler(seed))
        (i,) = sch.get_loops("B")
        return sch.sample_perfect_tile(i, n=3, max_innermost_factor=8)

    factors = sample(seed)
    assert len(factors) == 3 and math.prod(factors) == 96 and factors[-1] <= 8
    assert sample(seed) == factors


def test_perfect_tile_default_and_hint():
    sch = Schedule(scale())
    (i,) = sch.get_loops("B")
    assert sch.sample_perfect_tile(i, n=2) == [6, 16]  # largest innermost <= 16
    assert sch.sample_perfect_tile(i, n=3, decision=[4, 3, 8]) == [4, 3, 8]
    assert [d for _, d in sch.trace.decisions()] == [[6, 16], [4, 3, 8]]
    assert "decision=[4, 3, 8]" in str(sch.trace)


def test_perfect_tile_recorded_replayed_and_serialised():
    func = scale()
    sch = Schedule(func, sampler=RandomSampler(3))
    (i,) = sch.get_loops("B")
    factors = sch.sample_perfect_tile(i, n=2, max_innermost_factor=32)
    _, inner = sch.split(i, factors)
    sch.vectorize(inner)
    (k, decision), = sch.trace.decisions()
    assert decision == factors and sch.trace.insts[k].name == "sample_perfect_tile"
    # replay takes the recorded decision whatever the replaying schedule's sampler says
    again = Schedule(func, sampler=RandomSampler(99))
    sch.trace.apply_to(again)
    assert_structural_equal(again.mod, sch.mod)
    stored = Trace.from_json(json.loads(json.dumps(sch.trace.to_json())))
    assert stored.decisions() == sch.trace.decisions()
    fresh = Schedule(scale())
    stored.apply_to(fresh)
    assert_structural_equal(fresh.mod, sch.mod)
    assert np.allclose(run(fresh.mod, (96,), (96,)), 2 * run(func, (96,), (96,)) / 2)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda sch, i: sch.sample_perfect_tile(i, n=2, decision=[5, 16]), "multiply to 80, not the"),
        (lambda sch, i: sch.sample_perfect_tile(i, n=2, decision=[3, 32]), "exceeds max_innermost_factor=16"),
        (lambda sch, i: sch.sample_perfect_tile(i, n=2, decision=[96]), "list of 2 factors"),
        (lambda sch, i: sch.sample_perfect_tile(i, n=0), "n must be a positive integer"),
        (lambda sch, i: sch.sample_perfect_tile(i, n=1, max_innermost_factor=4), "no split into 1 factors"),
    ],
)
def test_perfect_tile_bad_input(call, message):
    sch = Schedule(scale())
    (i,) = sch.get_loops("B")
    before, length = sch.mod, len(sch.trace)
    with pytest.raises(ScheduleError, match="sample_perfect_tile") as err:
        call(sch, i)
    assert message in str(err.value)
    assert sch.mod is before and len(sch.trace) == length


def test_perfect_tile_needs_a_static_extent():
    sch = Schedule(symbolic())
    (i,) = sch.get_loops("B")
    with pytest.raises(ScheduleError, match="sample_perfect_tile: loop .* non-static extent n"):
        sch.sample_perfect_tile(i, n=2)
    assert sch.trace.decisions() == []


# -- sample_categorical ---------------------------------------------------------------------------


def test_categorical_default_random_and_probs():
    sch = Schedule(scale())
    assert sch.sample_categorical([4, 8, 16]) == 4
    assert sch.sample_categorical([4, 8, 16], probs=[0.2, 0.5, 0.3]) == 8
    assert sch.sample_categorical([[6, 4], [4, 3]], decision=1) == [4, 3]
    picks = set()
    for seed in range(20):
        s = Schedule(scale(), sampler=RandomSampler(seed))
        picks.add(s.sample_categorical(["a", "b", "c"], probs=[0.5, 0.5, 0.0]))
    assert picks == {"a", "b"}
    assert [d for _, d in sch.trace.decisions()] == [0, 1, 1]
    text = str(Trace.from_json(json.loads(json.dumps(sch.trace.to_json()))))
    assert "sch.sample_categorical([[6, 4], [4, 3]], decision=1)" in text


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"candidates": []}, "candidates must be a non-empty list"),
        ({"candidates": [1, 2], "probs": [0.5, 0.6]}, "sum to 1"),
        ({"candidates": [1, 2], "probs": [1.0]}, "1 probs for 2 candidates"),
        ({"candidates": [1, 2], "decision": 2}, "decision out of range"),
        ({"candidates": [object()]}, "plain values"),
    ],
)
def test_categorical_bad_input(kwargs, message):
    sch = Schedule(scale())
    with pytest.raises(ScheduleError, match="sample_categorical") as err:
        sch.sample_categorical(**kwargs)
    assert message in str(err.value)
    assert len(sch.trace) == 0


# -- sample_compute_location ----------------------------------------------------------------------


def test_compute_location_sampled_replayed_and_serialised():
    func = two_stage()
    results = set()
    for seed in range(6):
        sch = Schedule(func, sampler=RandomSampler(seed))
        loop = sch.sample_compute_location("B")
        if loop is not None:
            sch.compute_at("B", loop)
        (_, decision), = sch.trace.decisions()
        info = sch.trace.insts[-2 if loop is not None else -1].info
        assert info.locations == ["i", "j"] and decision in (-1, 0, 1)
        results.add(decision)
        fresh = Schedule(two_stage())
        Trace.from_json(json.loads(json.dumps(sch.trace.to_json()))).apply_to(fresh)
        assert_structural_equal(fresh.mod, sch.mod)
        out = run(fresh.mod, (16, 24), (16, 24))
        a = np.random.default_rng(0).standard_normal((16, 24)).astype("float32")
        assert np.allclose(out, a * 2 + 1)
    assert len(results) > 1
    sch = Schedule(func)
    assert sch.sample_compute_location("B") is None  # the default: stay at the root
    with pytest.raises(ScheduleError, match="sample_compute_location: decision out of range"):
        sch.sample_compute_location("B", decision=2)


# -- samplers -------------------------------------------------------------------------------------


def test_replay_sampler_takes_decisions_in_order_and_falls_back():
    sch = Schedule(scale(), sampler=ReplaySampler([[12, 8], 2]))
    (i,) = sch.get_loops("B")
    assert sch.sample_perfect_tile(i, n=2) == [12, 8]
    assert sch.sample_categorical([1, 2, 3]) == 3
    with pytest.raises(ScheduleError, match=r"instruction 2 \(sample_categorical\).*only 2 decisions"):
        sch.sample_categorical([1, 2])
    sch = Schedule(scale(), sampler=ReplaySampler([[5, 5]], fallback=DefaultSampler()))
    (i,) = sch.get_loops("B")
    assert sch.sample_perfect_tile(i, n=2) == [6, 16]
    assert sch.sampler.fell_back == [0]
    # trace.decisions() pairs are accepted as they are
    pairs = Schedule(scale(), sampler=ReplaySampler(sch.trace.decisions()))
    (i,) = pairs.get_loops("B")
    assert pairs.sample_perfect_tile(i, n=2) == [6, 16]


def test_use_sampler_reaches_schedules_made_inside():
    with use_sampler(ReplaySampler([1])):
        sch = Schedule(scale())
    assert sch.sample_categorical(["x", "y"]) == "y"
    assert isinstance(Schedule(scale()).sampler, DefaultSampler)
    with pytest.raises(ScheduleError, match="decide"):
        Schedule(scale()).sampler = object()


def test_mutations_stay_valid():
    rng = random.Random(0)
    tile = SampleInfo("perfect_tile", extent=96, n=3, max_innermost_factor=8)
    cat = SampleInfo("categorical", candidates=[1, 2, 3])
    loc = SampleInfo("compute_location", locations=["i", "j"])
    for info, start in ((tile, [12, 1, 8]), (cat, 0), (loc, -1)):
        d = start
        for _ in range(20):
            new = mutate_decision(info.kind, d, info, rng)
            assert new != d and info.is_valid(new)
            d = new
    lone = SampleInfo("categorical", candidates=[7])
    assert mutate_decision("categorical", 0, lone, rng) == 0
    with pytest.raises(ScheduleError, match="does not match"):
        mutate_decision("categorical", [12, 1, 8], tile, rng)


def test_index_map_closure_is_recorded_as_data():
    func = two_stage()
    sch = Schedule(func)

    def layout(*idx):  # a closure over *idx, as dlight's packing writes it
        return (idx[1] // 8, idx[0], idx[1] % 8)

    sch.transform_layout("B", ("write", 0), layout)
    assert "lambda i0, i1: (i1 // 8, i0, i1 % 8)" in str(sch.trace)
    fresh = Schedule(two_stage())
    Trace.from_json(json.loads(json.dumps(sch.trace.to_json()))).apply_to(fresh)
    assert_structural_equal(fresh.mod, sch.mod)
