"""Transpose's vector reads and writes: where the tiles divide the axes and the rows hold whole
vectors, each thread reads 4 float32s of the input with one 128-bit load and writes 4 of the
output with one 128-bit store, through the padded shared tile; results match the unscheduled
CPU build on PoCL, elsewhere the scalar copies stay."""

import re

import numpy as np
import pytest
from gpu_check import check_cubins, run_both, schedule

import graphc
from graphc import IRModule, te, tir
from graphc.dlight import gpu


def _transpose_2d(m, n, dtype="float32"):
    A = te.placeholder((m, n), dtype, name="A")
    return te.create_prim_func([A, te.compute((n, m), lambda i, j: A[j, i] * te.const(2, dtype), name="B")])


def _heads(b, s, h, d):  # attention's [batch, seq, heads, dim] -> [batch, heads, dim, seq]
    A = te.placeholder((b, s, h, d), name="A")
    B = te.compute((b, h, d, s), lambda a, x, y, z: A[a, z, x, y] + 1.0, name="B")
    return te.create_prim_func([A, B])


def _source(func, target="opencl"):
    sch = schedule(func, [gpu.Transpose()], target)
    return graphc.build(IRModule({"main": sch.with_attr("global_symbol", "main")}), target=target)


def _vectors(func) -> int:
    return sum(1 for s in _stmts(schedule(func, [gpu.Transpose()])) if s.kind == tir.ForKind.VECTORIZED)


def _stmts(func):
    from graphc.tir.schedule.state import walk

    return [s for s in walk(func.body) if isinstance(s, tir.For)]


@pytest.mark.parametrize("func", [_transpose_2d(64, 96), _heads(2, 64, 3, 96),
                                  _transpose_2d(64, 128, "int32")], ids=["2d", "heads", "int32"])
def test_vector_transposes_match_the_cpu(func):
    assert _vectors(func) == 2  # the read into shared memory and the write-back
    source = _source(func).imported_modules[0].get_source()
    assert source.count("vload4(") == 1 and source.count("vstore4(") == 1
    (cpu,), (dev,) = run_both(func, [gpu.Transpose()], [1])
    np.testing.assert_array_equal(dev, cpu)


def test_scalar_copies_where_the_sizes_do_not_allow():
    n = tir.Var("n", "int32")
    A = te.placeholder((n, 64), name="A")
    symbolic = te.create_prim_func([A, te.compute((64, n), lambda i, j: A[j, i], name="B")])
    cases = [(_transpose_2d(70, 100), None), (_heads(2, 48, 3, 64), None),  # tiles that do not divide
             (_transpose_2d(64, 96, "float16"), None), (symbolic, {0: (40, 64), 1: (64, 40)})]
    for func, shapes in cases:
        assert _vectors(func) == 0
        (cpu,), (dev,) = run_both(func, [gpu.Transpose()], [1], shapes=shapes)
        np.testing.assert_array_equal(dev, cpu)


def test_vector_transpose_compiles_to_128_bit_accesses():
    sch = schedule(_heads(2, 128, 12, 64), [gpu.Transpose()], "cuda")
    mod = IRModule({"t": sch.with_attr("global_symbol", "t")})
    check_cubins(mod)  # no spills
    ptx = graphc.build(mod, target="cuda -arch=sm_80").imported_modules[0].get_source("ptx")
    assert re.search(r"ld\.global(\.nc)?\.v4\.f32", ptx), "no 128-bit global load"
    assert re.search(r"st\.global\.v4\.f32", ptx), "no 128-bit global store"
