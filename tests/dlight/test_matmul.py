"""cpu.Matmul: numerics against the unscheduled build over random shapes, the loop nest it
makes, packing, parallel tasks, and what it declines."""

import dlight_programs as P
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import graphc
from graphc import dlight, te, tir, topi
from graphc.dlight.cpu.matmul import PREPROC_ANNOTATION, Tile, tile_shape

RULE = dlight.cpu.Matmul()
EPILOGUES = ["none", "bias", "bias_gelu", "residual", "scale"]


def matmul_program(m, n, k, batch=None, transposed=False, epilogue="none", m_var=False):
    """(PrimFunc, inputs) for out = epilogue(A @ B); B is (k, n), or (n, k) when transposed."""
    lead = () if batch is None else (batch,)
    rows = te.var("m") if m_var else m
    A = te.placeholder((*lead, rows, k), name="A")
    B = te.placeholder((*lead, n, k) if transposed else (*lead, k, n), name="B")
    r = te.reduce_axis((0, k), "r")

    def b_at(idx, j):
        return B(*idx, j, r) if transposed else B(*idx, r, j)

    C = te.compute((*lead, rows, n), lambda *i: te.sum(A(*i[:-1], r) * b_at(i[:-2], i[-1]), axis=r), name="C")
    extra, out = [], C
    if epilogue in ("bias", "bias_gelu"):
        bias = te.placeholder((n,), name="bias")
        extra = [bias]
        out = te.compute(C.shape, lambda *i: C(*i) + bias(i[-1]), name="D")
        if epilogue == "bias_gelu":
            out = topi.nn.gelu(out)
    elif epilogue == "residual":
        res = te.placeholder(C.shape, name="res")
        extra = [res]
        out = te.compute(C.shape, lambda *i: C(*i) + res(*i), name="D")
    elif epilogue == "scale":
        out = te.compute(C.shape, lambda *i: C(*i) * 0.125, name="D")
    return te.create_prim_func([A, B, *extra, out])


def _inputs(func, m=None):
    """Random arrays for the function's parameters but the last (the output)."""
    arrays = []
    for p in func.params[:-1]:
        buf = func.buffer_map[p]
        shape = [m if not isinstance(d, tir.IntImm) else d.value for d in buf.shape]
        arrays.append(P.RNG.standard_normal(shape).astype("float32"))
    out = func.buffer_map[func.params[-1]]
    out_shape = [m if not isinstance(d, tir.IntImm) else d.value for d in out.shape]
    return arrays, out_shape


def check_against_unscheduled(func, mod, m=None, rtol=1e-5):
    """Run the scheduled module and the unscheduled function on the same inputs."""
    arrays, out_shape = _inputs(func, m)
    want, got = np.empty(out_shape, "float32"), np.empty(out_shape, "float32")
    graphc.build(func)["main"](*arrays, want)
    graphc.build(mod)["main"](*arrays, got)
    k = arrays[0].shape[-1]
    np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-5 * max(1, k) ** 0.5)


def _apply(func, target=P.AVX512):
    sch = RULE.apply(func, target, False)
    assert isinstance(sch, tir.Schedule)
    return sch


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    m=st.integers(1, 40),
    n=st.integers(1, 150),
    k=st.integers(1, 70),
    batch=st.sampled_from([None, 1, 3]),
    transposed=st.booleans(),
    epilogue=st.sampled_from(EPILOGUES),
    layout_free=st.booleans(),
)
def test_random_matmuls_match_the_unscheduled_build(m, n, k, batch, transposed, epilogue, layout_free):
    func = matmul_program(m, n, k, batch, transposed, epilogue)
    if layout_free:  # the packing stays whole at the root; it still runs in the kernel
        func = func.with_attr("layout_free_buffers", [1])
    check_against_unscheduled(func, _apply(func).mod)


@pytest.mark.parametrize("target", [P.AVX2, P.AVX512], ids=["avx2", "avx512"])
@pytest.mark.parametrize("m,n,k", [(197, 131, 67), (16, 768, 64), (1, 1000, 32), (7, 9, 2000)])
def test_prime_and_skinny_shapes(m, n, k, target):
    func = matmul_program(m, n, k, epilogue="bias")
    check_against_unscheduled(func, _apply(func, target).mod)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    lead=st.sampled_from([(1,), (1, 1)]),
    m=st.sampled_from([5, 7, 13, 197]),
    n=st.integers(1, 70),
    transposed=st.booleans(),
    epilogue=st.sampled_from(EPILOGUES),
)
def test_activation_rows_under_unit_axes_match_the_unscheduled_build(lead, m, n, transposed, epilogue):
    """A linear layer on (1, tokens, features), as in ViT (197 tokens: a guarded last row tile):
    the unit axes of A's rows are left out of the row fuse, which keeps the bindings affine."""
    k = 24
    A = te.placeholder((*lead, m, k), name="A")
    B = te.placeholder((n, k) if transposed else (k, n), name="B")
    r = te.reduce_axis((0, k), "r")
    def b_at(j):
        return B[j, r] if transposed else B[r, j]

    C = te.compute((*lead, m, n), lambda *i: te.sum(A(*i[:-1], r) * b_at(i[-1]), axis=r), name="C")
    out = topi.nn.gelu(C) if epilogue == "bias_gelu" else C
    func = te.create_prim_func([A, B, out])
    check_against_unscheduled(func, _apply(func).mod)


def test_vit_linear_layer_gets_the_micro_kernel():
    A, W = te.placeholder((1, 197, 768), name="A"), te.placeholder((768, 768), name="W")
    r = te.reduce_axis((0, 768), "r")
    C = te.compute((1, 197, 768), lambda b, i, j: te.sum(A[b, i, r] * W[j, r], axis=r), name="C")
    sch = _apply(te.create_prim_func([A, W, C]))
    # 32 tiles of 6 rows, then the last 5 rows peeled; the unit batch loop stays outermost
    for part in ("C_update_i_00", "C_update_i_01"):
        kinds = [sch.get(lp).kind.value for lp in sch.get_loops(sch.get_block(part))]
        assert kinds[:2] == ["serial", "parallel"] and kinds[-3:] == ["unroll", "unroll", "vectorized"]


def test_symbolic_rows_run_at_any_size():
    func = matmul_program(0, 96, 48, epilogue="bias_gelu", m_var=True)
    mod = _apply(func).mod
    for m in (1, 5, 6, 37):
        check_against_unscheduled(func, mod, m=m)


def test_micro_kernel_loop_nest():
    sch = _apply(matmul_program(128, 256, 64, epilogue="bias_gelu"))
    # (batch x panels) parallel, row tiles, k, then MR x NR unrolled into zmm FMAs
    assert P.loop_kinds(sch, "C_update") == ["parallel", "serial", "serial", "unroll", "unroll", "vectorized"]
    assert [e.value for e in P.loop_extents(sch, "C_update")][-3:] == [4, 4, 16]  # 128 % 6 != 0: MR 4
    # the epilogue runs on each register tile, vectorized, reading the local accumulator
    gelu = sch.get(sch.get_block("T_gelu"))
    assert P.loop_kinds(sch, "T_gelu")[-1] == "vectorized"
    assert any(r.buffer.scope == "local" for r in gelu.reads)


def test_tile_follows_the_vector_registers():
    assert tile_shape(32, 16, 128, 768) == Tile(6, 4, 16)  # AVX-512: 24 accumulators
    assert tile_shape(16, 8, 128, 768) == Tile(4, 3, 8)  # AVX2: 12 of 16 registers
    assert tile_shape(32, 16, 3, 768).mr == 3  # a short M is one tile
    assert tile_shape(32, 16, 64, 20).nv == 2  # a short N takes fewer vectors
    sch = _apply(matmul_program(64, 64, 64), P.AVX2)
    assert [e.value for e in P.loop_extents(sch, "C_update")][-2:] == [3, 8]


def test_packing_placement_depends_on_layout_free_buffers():
    func = matmul_program(64, 100, 64)
    sch = _apply(func)  # B is an activation: each parallel task packs its own panel
    assert P.loop_kinds(sch, "B_pad")[0] == "parallel"
    assert PREPROC_ANNOTATION not in sch.get(sch.get_block("B_pad")).annotations
    sch = _apply(func.with_attr("layout_free_buffers", [1]))  # a weight: one whole packing block
    pack = sch.get(sch.get_block("B_pad"))
    assert pack.annotations.get(PREPROC_ANNOTATION) and P.loop_kinds(sch, "B_pad")[0] == "serial"
    assert [int(d) for d in pack.writes[0].buffer.shape] == [2, 64, 64]  # panels of 64 columns, zero-padded


def test_small_matmuls_stay_serial():
    sch = _apply(matmul_program(4, 64, 32))
    assert "parallel" not in P.loop_kinds(sch, "C_update")


def test_rows_are_chunked_when_panels_split_unevenly():
    target = graphc.target.Target("llvm -mcpu=x86-64 -mattr=+avx2,+avx512f -num-cores=4")
    sch = RULE.apply(matmul_program(96, 128, 256), target, False)  # 2 panels, 4 cores
    par = sch.get(sch.get_loops(sch.get_block("C_update"))[0])
    assert par.kind.value == "parallel" and par.extent.value % 4 == 0


def test_declines_what_is_not_a_matmul():
    assert RULE.apply(P.row_reduce()[0], P.AVX512, False) is None
    assert RULE.apply(P.gemv()[0], P.AVX512, False) is None  # dot products: the Reduction rule's
    A = te.placeholder((16, 16), "int32", name="A")
    r = te.reduce_axis((0, 16), "r")
    C = te.compute((16, 16), lambda i, j: te.sum(A[i, r] * A[r, j], axis=r), name="C")
    assert RULE.apply(te.create_prim_func([A, C]), P.AVX512, False) is None  # integer


def test_is_first_in_the_cpu_defaults():
    names = [r.name for r in dlight.default_rules("llvm")]
    assert names.index("Matmul") < names.index("Reduction") < names.index("Fallback")
