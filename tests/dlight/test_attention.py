"""cpu.Attention: fused attention against the unscheduled build over random shapes and masks,
the fused loop nest, and what it declines."""

import dlight_programs as P
import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import graphc
from graphc import dlight, te, tir
from graphc.topi.nn.attention import attention

RULE = dlight.cpu.Attention()


def attention_program(s, s_kv, heads, d, mask="none", dtype="float32", d_v=None):
    q = te.placeholder((1, s, heads, d), dtype, name="q")
    k = te.placeholder((1, s_kv, heads, d), dtype, name="k")
    v = te.placeholder((1, s_kv, heads, d_v or d), dtype, name="v")
    extra, bias, causal = [], None, None
    if mask == "bool":
        bias = te.placeholder((1, 1, s, s_kv), "bool", name="mask")
    elif mask == "float":
        bias = te.placeholder((1, heads, s, s_kv), dtype, name="bias")
    elif mask == "causal":
        causal = "BottomRight"
    if bias is not None:
        extra = [bias]
    out = attention(q, k, v, bias=bias, causal_mask=causal)
    return te.create_prim_func([q, k, v, *extra, out])


def check_against_unscheduled(func, mod):
    arrays = []
    for p in func.params[:-1]:
        buf = func.buffer_map[p]
        shape = [int(x) for x in buf.shape]
        if buf.dtype == "bool":
            arrays.append(P.RNG.random(shape) > 0.2)
        else:
            arrays.append(P.RNG.standard_normal(shape).astype(buf.dtype))
    out_buf = func.buffer_map[func.params[-1]]
    want = np.empty([int(x) for x in out_buf.shape], out_buf.dtype)
    got = np.empty_like(want)
    graphc.build(func)["main"](*arrays, want)
    graphc.build(mod)["main"](*arrays, got)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=2e-6)


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    s=st.integers(2, 45),
    s_kv=st.integers(2, 45),
    heads=st.integers(1, 3),
    d=st.sampled_from([16, 32]),
    mask=st.sampled_from(["none", "bool", "float", "causal"]),
)
def test_random_attention_matches_the_unscheduled_build(s, s_kv, heads, d, mask):
    func = attention_program(s, s_kv, heads, d, mask)
    sch = RULE.apply(func, P.AVX512, False)
    assert isinstance(sch, tir.Schedule)
    check_against_unscheduled(func, sch.mod)


def test_vit_shape_with_odd_key_count_and_avx2():
    func = attention_program(197 // 4, 197 // 4, 2, 64)  # 49 rows and keys: partial tiles everywhere
    for target in (P.AVX2, P.AVX512):
        check_against_unscheduled(func, RULE.apply(func, target, False).mod)


def test_one_fused_nest_with_key_major_tiles():
    sch = RULE.apply(attention_program(64, 64, 4, 64, "bool"), P.AVX512, False)
    main = sch.mod["main"]
    loops = [b for b in tir.schedule.state.walk(main.body) if isinstance(b, tir.For)]
    # everything runs under the (batch x head) parallel loop
    assert loops[0].kind.value == "parallel" and int(loops[0].extent) == 4
    assert all(lp.kind.value != "parallel" for lp in loops[1:])
    # score and probabilities are stored keys first: vectors run along query rows
    score = next(b for b in main.body.block.alloc_buffers if b.name == "T_attention_score")
    assert [int(x) for x in score.shape] == [1, 4, 64, 64]
    assert "T_attention_score[0, v_h, v_j, v_i]" in main.script()
    assert P.loop_kinds(sch, "T_attention_max_update")[-1] == "vectorized"
    assert P.loop_kinds(sch, "T_attention_softmax")[-1] == "vectorized"
    assert P.loop_kinds(sch, "T_attention_update")[-3:] == ["unroll", "unroll", "vectorized"]


def test_one_query_row_or_key_is_left_to_the_other_rules():
    func = attention_program(1, 9, 2, 16)  # decoding one token
    assert RULE.apply(func, P.AVX512, False) is None
    with graphc.target.Target("llvm"):
        check_against_unscheduled(func, dlight.default_schedule()(graphc.IRModule({"main": func})))


def test_declines_other_functions():
    assert RULE.apply(P.softmax()[0], P.AVX512, False) is None
    assert RULE.apply(P.matmul()[0], P.AVX512, False) is None
    assert RULE.apply(attention_program(8, 8, 1, 12), P.AVX512, False) is None  # 12 is not whole vectors
    assert RULE.apply(attention_program(8, 8, 1, 16, dtype="float64"), P.AVX512, False) is None


def test_is_in_the_cpu_defaults():
    assert "Attention" in [r.name for r in dlight.default_rules("llvm")]
