"""Block infos, inlining and target vector widths (graphc/dlight/base, graphc/dlight/cpu/utils.py)."""

import dlight_programs as P
import pytest

from graphc import tir
from graphc.dlight import normalize_prim_func, try_inline
from graphc.dlight.base.analysis import is_output_block
from graphc.dlight.cpu.utils import vector_bits, vector_lanes
from graphc.target import Target


def _infos(program):
    sch = tir.Schedule(program()[0])
    return sch, normalize_prim_func(sch)


def test_elementwise_block_info():
    sch, (info,) = _infos(P.elementwise)
    assert info.name == "C" and info.dom_kind() == "SS"
    assert info.is_injective() and info.is_elementwise(sch) and not info.is_reduction()
    assert [int(d.value) for d in info.dom()] == [64, 512] and info.total_work() == 64 * 512


def test_broadcast_is_injective_not_elementwise():
    sch, (info,) = _infos(P.broadcast)
    assert info.is_injective() and not info.is_elementwise(sch)


@pytest.mark.parametrize(
    "program, kinds", [(P.row_reduce, "SR"), (P.middle_sum_srs, "SRS"), (P.col_sum, "SR"), (P.matmul, "SSR")]
)
def test_reduction_kinds(program, kinds):
    sch, (info,) = _infos(program)
    assert info.dom_kind() == kinds and info.is_reduction() and not info.is_injective()


def test_symbolic_extent_and_work():
    _, (info,) = _infos(P.symbolic_add)
    assert info.iters[0].extent is None and info.iters[1].extent == 64 and info.total_work() is None


def test_softmax_blocks_in_program_order():
    sch, infos = _infos(P.softmax)
    assert [(i.name, i.dom_kind()) for i in infos] == [("M", "SR"), ("E", "SS"), ("Z", "SR"), ("O", "SS")]
    assert [is_output_block(sch, i.block_rv) for i in infos] == [False, False, False, True]


def test_try_inline_chain_leaves_the_output_block():
    sch = tir.Schedule(P.injective_chain()[0])
    infos = try_inline(sch)
    assert [i.name for i in infos] == ["R"]
    assert not sch.mod["main"].body.block.alloc_buffers  # the intermediates are gone
    P.check_numerics(sch.mod, *P.injective_chain()[1:])


def test_try_inline_keeps_reductions_and_shared_transcendentals():
    sch = tir.Schedule(P.softmax()[0])
    # E = exp(A - M) feeds Z and O: inlining would compute every exp twice
    assert [i.name for i in try_inline(sch)] == ["M", "E", "Z", "O"]
    P.check_numerics(sch.mod, *P.softmax()[1:])


def test_try_inline_duplicates_cheap_producers():
    from graphc import te

    A = te.placeholder((8, 16), name="A")
    B = te.compute((8, 16), lambda i, j: A[i, j] * 2.0, name="B")
    C = te.compute((8, 16), lambda i, j: B[i, j] + 1.0, name="C")
    D = te.compute((8, 16), lambda i, j: B[i, j] - C[i, j], name="D")
    sch = tir.Schedule(te.create_prim_func([A, D]))
    assert [i.name for i in try_inline(sch)] == ["D"]
    a = P.rand(8, 16)
    P.check_numerics(sch.mod, [a], lambda x: [2 * x - (2 * x + 1)])


@pytest.mark.parametrize(
    "text, bits, lanes32, lanes64",
    [
        ("llvm -mcpu=x86-64 -mattr=+avx512f,+avx2", 512, 16, 8),
        ("llvm -mcpu=x86-64 -mattr=+avx2", 256, 8, 4),
        ("llvm -mcpu=x86-64 -mattr=+sse2", 128, 4, 2),
        ("llvm -mcpu=skylake-avx512", 512, 16, 8),
        ("llvm -mcpu=haswell", 256, 8, 4),
    ],
)
def test_vector_lanes_from_target(text, bits, lanes32, lanes64):
    t = Target(text)
    assert vector_bits(t) == bits
    assert (vector_lanes(t, "float32"), vector_lanes(t, "float64")) == (lanes32, lanes64)
