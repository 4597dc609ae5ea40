"""The per-task floor table: each kernel against max(FLOPs / peak, bytes / bandwidth)."""

import math

import pytest

from graphc import te
from graphc.tune.floor import FloorRow, floor_rows, format_floor_table, shares, time_tasks
from graphc.tune.tasks import Task


def _matmul(n=64):
    A = te.placeholder((n, n), "float32", name="A")
    B = te.placeholder((n, n), "float32", name="B")
    k = te.reduce_axis((0, n), "k")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    return Task.from_func(te.create_prim_func([A, B, C]), name="matmul", weight=12)


def _row_sum(rows=128, cols=768):
    A = te.placeholder((rows, cols), "float32", name="A")
    k = te.reduce_axis((0, cols), "k")
    S = te.compute((rows,), lambda i: te.sum(A[i, k], axis=k), name="S")
    return Task.from_func(te.create_prim_func([A, S]), name="row_sum", weight=25)


def test_each_row_is_held_to_the_slower_of_compute_and_memory():
    matmul, row_sum = _matmul(), _row_sum()
    # a machine of 200 GFLOP/s and 50 GB/s; the kernels' times above both floors
    times = {matmul.workload: (20e-6, 10e-6, 200.0, 50.0), row_sum.workload: (30e-6, 25e-6, 200.0, 50.0)}
    rows = {r.name: r for r in floor_rows([matmul, row_sum], times)}
    mm, rs = rows["matmul"], rows["row_sum"]
    assert (mm.flops, mm.bytes, mm.calls) == (2 * 64**3, 3 * 64 * 64 * 4, 12)
    assert mm.bound == "compute" and math.isclose(mm.floor, 2 * 64**3 / 200e9)
    assert rs.bound == "memory" and math.isclose(rs.floor, (128 * 768 + 128) * 4 / 50e9)
    for r in rows.values():
        assert 0 < r.floor <= r.tuned <= r.default and 0 < r.at_floor <= 1
        assert math.isclose(r.at_floor, r.floor / r.default)


def test_rows_come_most_time_first_and_their_shares_sum_to_one():
    matmul, row_sum = _matmul(), _row_sum()
    times = {matmul.workload: (20e-6, 10e-6, 200.0, 50.0), row_sum.workload: (30e-6, 25e-6, 200.0, 50.0)}
    rows = floor_rows([matmul, row_sum], times)
    assert [r.name for r in rows] == ["row_sum", "matmul"]  # 25 x 30 us before 12 x 20 us
    parts = shares(rows)
    assert math.isclose(sum(parts), 1.0) and math.isclose(parts[0], 25 * 30 / (25 * 30 + 12 * 20))
    text = format_floor_table(rows)
    assert "row_sum" in text.splitlines()[1] and "memory" in text and "compute" in text
    floor = sum(r.calls * r.floor for r in rows)
    default = sum(r.calls * r.default for r in rows)
    assert f"{default / floor:.2f}x over the default" in text


def test_a_task_without_times_has_no_row():
    assert floor_rows([_matmul()], {}) == []
    assert shares([]) == []


def test_time_tasks_builds_and_measures_each_task_beside_the_probes():
    task = _matmul(16)
    (times,) = time_tasks([task], None, "llvm", repeat=1, min_seconds=1e-4).values()
    default, tuned, gflops, gbs = times
    assert all(math.isfinite(x) and x > 0 for x in times)
    row = FloorRow("m", 1, task.flops, 3 * 16 * 16 * 4, default, tuned).with_floor(gflops, gbs)
    assert row.floor > 0 and row.bound in ("compute", "memory")


def test_a_row_needs_positive_rates():
    with pytest.raises(ValueError, match="task m: the floor needs a positive peak"):
        FloorRow("m", 1, 10, 10, 1e-6, 1e-6).with_floor(0.0, 1.0)


def test_a_kernel_faster_than_its_floor_is_marked():
    task = _matmul()
    # 2 * 64^3 FLOPs at 10 GFLOP/s: a 52 us floor; the kernel took 20 us: the probe underrates the machine
    rows = floor_rows([task], {task.workload: (20e-6, 20e-6, 10.0, 50.0)})
    assert rows[0].floor > rows[0].default
    text = format_floor_table(rows)
    assert text.splitlines()[1].endswith(" *") and "ran faster than its floor" in text


def test_the_peak_probe_counts_graphcs_own_matmul_kernel():
    from graphc.tune.floor import Probes

    probes = Probes()
    try:
        rates = probes.rates(min_seconds=1e-3)
    finally:
        probes.close()
    assert set(rates) == {"numpy 512^3 x cores", "numpy 1024^3", "micro-kernel x threads"}
    assert all(r > 0 for r in rates.values())


def test_the_floor_of_a_matmul_is_not_above_its_measured_default_time():
    # a peak probe that underrates the machine puts the floor above what the kernel achieves: numpy's
    # 512^3 kernel alone (253 GFLOP/s on znver5, against ~540 for graphc's AVX-512 micro-kernel)
    # put this floor at about twice the default's time; the probes now include that micro-kernel
    task = _matmul(256)
    (times,) = time_tasks([task], None, "llvm", repeat=3, min_seconds=2e-3).values()
    default, _, gflops, gbs = times
    row = FloorRow("m", 1, task.flops, 3 * 256 * 256 * 4, default, default).with_floor(gflops, gbs)
    assert row.bound == "compute"
    assert row.floor <= default * 1.3, f"floor {row.floor * 1e6:.1f} us, default {default * 1e6:.1f} us"
