"""relax.nn.attention: struct info, errors, script round trip, and legalized numerics against
PyTorch's scaled_dot_product_attention (whose layout is (batch, heads, seq, dim))."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from graphc import relax, tir
from graphc.errors import TypeInferenceError
from graphc.ir import structural_equal
from graphc.script import from_source

R = relax
N = tir.Var("n", "int64")
M = tir.Var("m", "int64")


def t(*shape, dtype="float32"):
    return R.TensorStructInfo(shape, dtype)


def _sinfo(call):
    return R.BlockBuilder().normalize(call).struct_info


def _rand(shape, seed, dtype="float32"):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


# --- struct info ----------------------------------------------------------------------------


def test_struct_info_symbolic_gqa_and_value_head_dim():
    q, k, v = R.Var("q", t(2, N, 8, 16)), R.Var("k", t(2, M, 2, 16)), R.Var("v", t(2, M, 4, 5))
    assert repr(_sinfo(R.op.nn.attention(q, k, v))) == 'R.Tensor((2, n, 8, 5), dtype="float32")'
    mask = R.Var("mask", t(N, M, dtype="bool"))
    assert repr(_sinfo(R.op.nn.attention(q, k, v, mask, causal_mask="TopLeft"))) == \
        'R.Tensor((2, n, 8, 5), dtype="float32")'
    unknown = R.Var("u", R.TensorStructInfo(ndim=4, dtype="float32"))
    assert repr(_sinfo(R.op.nn.attention(unknown, k, v))) == 'R.Tensor(dtype="float32", ndim=4)'
    call = R.op.nn.attention(q, k, v, scale=0.25, causal_mask="BottomRight", window_size=3)
    assert call.attrs == {"scale": 0.25, "causal_mask": "BottomRight", "window_size": 3}
    assert R.op.Op.get("relax.nn.attention").pattern == R.op.OpPatternKind.kOpaque


def _q(shape=(2, 4, 2, 8), name="q", dtype="float32"):
    return R.Var(name, t(*shape, dtype=dtype))


ERRORS = [  # (args, attrs, message)
    (lambda: [_q(), _q()], {}, r"'nn.attention' expects 3 arguments \(query, key, value\) or 4 \(and bias\), "
                               r"got 2"),
    (lambda: [_q(), _q(), _q()], {"causal_mask": "Top"},
     r"expects causal_mask to be None, 'TopLeft' or 'BottomRight', got 'Top'"),
    (lambda: [_q(), _q(), _q()], {"causal_mask": "TopLeft", "window_size": 0},
     r"expects window_size to be a positive int, got 0"),
    (lambda: [_q(), _q(), _q()], {"window_size": 2},
     r"expects a causal_mask with window_size=2 .* set causal_mask='TopLeft' or 'BottomRight'"),
    (lambda: [_q(), _q(), _q()], {"scale": "big"}, r"expects scale to be None or a float, got 'big'"),
    (lambda: [_q(dtype="int32"), _q(), _q()], {},
     r"requires query to have a float dtype, got R.Tensor\(\(2, 4, 2, 8\), dtype=\"int32\"\)"),
    (lambda: [_q(), _q(dtype="float16"), _q()], {},
     r"expects key to have query's dtype float32, got R.Tensor\(\(2, 4, 2, 8\), dtype=\"float16\"\)"),
    (lambda: [_q(), _q(), _q(), _q((4, 4), dtype="int32")], {},
     r"expects bias to have query's dtype float32 \(added to the scores\) or bool \(a mask\), "
     r"got R.Tensor\(\(4, 4\), dtype=\"int32\"\)"),
    (lambda: [_q((2, 4, 8)), _q(), _q()], {},
     r"expects query to have 4 dimensions \(batch, seq_len, num_heads, head_dim\), "
     r"got R.Tensor\(\(2, 4, 8\)"),
    (lambda: [_q(), _q((3, 4, 2, 8)), _q()], {},
     r"expects key to have query's batch size 2, got R.Tensor\(\(3, 4, 2, 8\)"),
    (lambda: [_q(), _q(), _q((3, 4, 2, 8))], {},
     r"expects value to have query's batch size 2, got R.Tensor\(\(3, 4, 2, 8\)"),
    (lambda: [_q(), _q((2, 4, 2, 4)), _q()], {},
     r"expects key to have query's head_dim 8, got R.Tensor\(\(2, 4, 2, 4\)"),
    (lambda: [_q((2, 4, 4, 8)), _q((2, 4, 3, 8)), _q((2, 4, 4, 8))], {},
     r"expects key's number of heads to divide query's 4, got R.Tensor\(\(2, 4, 3, 8\)"),
    (lambda: [_q(), _q(), _q((2, 4, 3, 8))], {},
     r"expects value's number of heads to divide query's 2, got R.Tensor\(\(2, 4, 3, 8\)"),
    (lambda: [_q(), _q((2, 6, 2, 8)), _q()], {},
     r"expects value to have key's sequence length 6, got R.Tensor\(\(2, 4, 2, 8\)"),
    (lambda: [_q(), _q(), _q(), _q((1, 2, 2, 4, 4))], {},
     r"expects bias to have 1 to 4 dimensions broadcasting to \(batch, num_heads, seq_len, seq_len_kv\)"),
    (lambda: [_q(), _q(), _q(), _q((3, 4))], {},
     r"expects bias to broadcast to \(batch, num_heads, seq_len, seq_len_kv\) = \(2, 2, 4, 4\), "
     r"got R.Tensor\(\(3, 4\)"),
    (lambda: [R.Var("tup", R.TupleStructInfo([])), _q(), _q()], {},
     r"expects argument query to be a tensor \(R.Tensor\), got R.Tuple\(\)"),
]


@pytest.mark.parametrize("make_args,attrs,message", ERRORS)
def test_errors(make_args, attrs, message):
    full = {"scale": None, "causal_mask": None, "window_size": None, **attrs}
    call = R.Call(R.Op.get("relax.nn.attention"), make_args(), full)
    with pytest.raises(TypeInferenceError, match=message):
        R.BlockBuilder().normalize(call)


def test_symbolic_heads_that_cannot_divide_are_rejected():
    h = tir.Var("h", "int64")
    q, kv = R.Var("q", t(1, 4, h * 2 + 1, 8)), R.Var("kv", t(1, 4, 2, 8))
    message = r"expects key's number of heads to divide query's h \* 2 \+ 1"
    with pytest.raises(TypeInferenceError, match=message):
        _sinfo(R.op.nn.attention(q, kv, kv))
    q = R.Var("q", t(1, 4, h * 2, 8))
    assert repr(_sinfo(R.op.nn.attention(q, kv, kv))) == 'R.Tensor((1, 4, h * 2, 8), dtype="float32")'


def test_script_round_trip():
    q, kv, mask = R.Var("q", t(1, N, 4, 8)), R.Var("kv", t(1, 6, 2, 8)), R.Var("mask", t(N, 6, dtype="bool"))
    bb = R.BlockBuilder()
    with bb.function("main", [q, kv, mask]):
        with bb.dataflow():
            lv = bb.emit(R.op.nn.attention(q, kv, kv, mask, scale=0.5, causal_mask="BottomRight",
                                           window_size=3))
            gv = bb.emit_output(R.op.nn.attention(lv, kv, kv))
        bb.emit_func_output(gv)
    mod = bb.get()
    text = mod.script()
    assert 'R.nn.attention(q, kv, kv, mask, scale=0.5, causal_mask="BottomRight", window_size=3)' in text
    assert "R.nn.attention(lv, kv, kv, scale=None, causal_mask=None, window_size=None)" in text
    parsed = from_source(text)
    assert structural_equal(parsed["main"], mod["main"]) and parsed.script() == text


# --- legalized numerics against torch --------------------------------------------------------


def _tril(seq_len, seq_len_kv, diagonal):
    return torch.ones(seq_len, seq_len_kv, dtype=torch.bool).tril(diagonal)


def _reference(q, k, v, bias=None, scale=None, causal_mask=None, window_size=None):
    """torch sdpa on (batch, heads, seq, dim) with TVM's masks made explicit."""
    def bhsd(x):
        return torch.from_numpy(x).double().permute(0, 2, 1, 3)

    seq_len, seq_len_kv = q.shape[1], k.shape[1]
    mask = None
    if bias is not None:
        mask = torch.from_numpy(bias)
        mask = mask if mask.dtype == torch.bool else mask.double()
    if causal_mask is not None:
        diagonal = 0 if causal_mask == "TopLeft" else abs(seq_len - seq_len_kv)
        keep = _tril(seq_len, seq_len_kv, diagonal)
        if window_size is not None:
            keep &= ~_tril(seq_len, seq_len_kv, diagonal - window_size)
        if mask is None:
            mask = keep
        elif mask.dtype == torch.bool:
            mask = mask & keep
        else:
            mask = mask.masked_fill(~keep, float("-inf"))
    out = F.scaled_dot_product_attention(bhsd(q), bhsd(k), bhsd(v), attn_mask=mask, scale=scale,
                                         enable_gqa=True)
    return out.permute(0, 2, 1, 3).numpy()


CASES = {  # name: (q shape, k shape, v shape, bias shape or None, bias dtype, attrs)
    "plain": ((2, 4, 2, 8), (2, 6, 2, 8), (2, 6, 2, 8), None, None, {}),
    "scale_and_head_dim_v": ((1, 3, 2, 8), (1, 5, 2, 8), (1, 5, 2, 3), None, None, {"scale": 0.3}),
    "top_left": ((1, 4, 2, 4), (1, 6, 2, 4), (1, 6, 2, 4), None, None, {"causal_mask": "TopLeft"}),
    "bottom_right": ((1, 4, 2, 4), (1, 6, 2, 4), (1, 6, 2, 4), None, None, {"causal_mask": "BottomRight"}),
    "bottom_right_long_query": ((1, 6, 1, 4), (1, 4, 1, 4), (1, 4, 1, 4), None, None,
                                {"causal_mask": "BottomRight"}),
    "window": ((1, 6, 2, 4), (1, 6, 2, 4), (1, 6, 2, 4), None, None,
               {"causal_mask": "TopLeft", "window_size": 2}),
    "gqa": ((2, 3, 4, 8), (2, 5, 2, 8), (2, 5, 1, 8), None, None, {}),
    "full_bias": ((2, 4, 2, 8), (2, 6, 2, 8), (2, 6, 2, 8), (2, 2, 4, 6), "float32", {}),
    "broadcast_bias": ((2, 4, 2, 8), (2, 6, 2, 8), (2, 6, 2, 8), (1, 2, 1, 6), "float32",
                       {"causal_mask": "TopLeft"}),
    "bool_mask": ((2, 4, 2, 8), (2, 6, 2, 8), (2, 6, 2, 8), (4, 6), "bool", {}),
    "bool_mask_and_causal": ((1, 4, 2, 8), (1, 4, 2, 8), (1, 4, 2, 8), (2, 4, 4), "bool",
                             {"causal_mask": "TopLeft"}),
}


def _bias(shape, dtype, seed=4):
    if dtype == "bool":
        mask = np.random.default_rng(seed).uniform(size=shape) > 0.4
        mask[..., 1, :] = False  # a row with nothing to attend to gives zeros, as in torch
        return mask
    return _rand(shape, seed)


@pytest.mark.parametrize("name", sorted(CASES))
def test_numerics_against_torch(legalize_run, name):
    qs, ks, vs, bs, bdtype, attrs = CASES[name]
    arrays = [_rand(qs, 1), _rand(ks, 2), _rand(vs, 3)]
    sinfos = [t(*qs), t(*ks), t(*vs)]
    if bs is not None:
        arrays.append(_bias(bs, bdtype))
        sinfos.append(t(*bs, dtype=bdtype))
    out = legalize_run(lambda *a: R.op.nn.attention(*a, **attrs), sinfos, arrays,
                       "attention" if bs is None else "attention_bias")[0]
    ref = _reference(*arrays, **attrs)
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5)


def test_numerics_with_symbolic_sequence_lengths(legalize_run):
    sinfos = [t(2, N, 2, 8), t(2, M, 2, 8), t(2, M, 2, 8), t(N, M)]
    for seq_len, seq_len_kv in ((3, 5), (5, 2)):
        arrays = [_rand((2, seq_len, 2, 8), 1), _rand((2, seq_len_kv, 2, 8), 2),
                  _rand((2, seq_len_kv, 2, 8), 3), _rand((seq_len, seq_len_kv), 4)]
        out = legalize_run(lambda *a: R.op.nn.attention(*a, causal_mask="BottomRight"), sinfos, arrays,
                           "attention_bias")[0]
        ref = _reference(*arrays, causal_mask="BottomRight")
        np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5)
