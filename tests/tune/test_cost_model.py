"""The cost model's features tell schedules apart, and the model learns a ranking online."""

import math

import pytest

from graphc import te, tir
from graphc.tune.cost_model import FEATURE_NAMES, CostModel, decision_features, features

pytest.importorskip("sklearn")


def scheduled(parallel: bool, vector: int):
    A = te.placeholder((256, 256), "float32", name="A")
    B = te.compute((256, 256), lambda i, j: A[i, j] * 2.0, name="B")
    sch = tir.Schedule(te.create_prim_func([A, B]))
    i, j = sch.get_loops(sch.get_block("B"))
    jo, ji = sch.split(j, factors=[None, vector])
    if parallel:
        sch.parallel(i)
    sch.vectorize(ji)
    return sch.mod["main"]


def test_features_see_parallel_and_vector_loops():
    names = {name: k for k, name in enumerate(FEATURE_NAMES)}
    serial, par = features(scheduled(False, 8)), features(scheduled(True, 16))
    assert serial[names["parallel_work_share"]] == 0 and par[names["parallel_work_share"]] == 1
    assert par[names["log2_parallel_extent"]] == 8 and par[names["vector_width"]] == 16
    assert serial[names["vector_work_share"]] == 1 and serial[names["log2_flops"]] == 16


def test_decision_features_have_a_fixed_length():
    assert decision_features([[0, [4, 16]], [3, 2]], length=4) == [2.0, 4.0, 1.0, 0.0]


def test_the_model_learns_a_ranking_online():
    model = CostModel(min_samples=8)
    assert model.predict([[1.0, 2.0]]) is None  # no opinion before it has data
    for a in range(1, 9):
        for b in range(1, 4):
            model.update([float(a), float(b)], 1e-3 * a / b)  # time grows with a, falls with b
    model.update([9.0, 1.0], math.inf)  # a failure counts as slow
    fast, slow = model.predict([[1.0, 3.0], [8.0, 1.0]])
    assert fast < slow
