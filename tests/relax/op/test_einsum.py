"""relax.einsum and relax.outer: struct info, errors, script round trip, and legalized numerics
against numpy's einsum / outer (torch.einsum where numpy and torch differ: '...' summed away)."""

import numpy as np
import pytest
import torch

from graphc import relax, tir
from graphc.errors import TypeInferenceError
from graphc.ir import structural_equal
from graphc.relax.op.linear_algebra import einsum, outer
from graphc.script import from_source

R = relax
N = tir.Var("n", "int64")


def t(*shape, dtype="float32"):
    return R.TensorStructInfo(shape, dtype)


def _vars(*sinfos):
    return [R.Var(f"x{k}", s) for k, s in enumerate(sinfos)]


def _sinfo(call):
    return R.BlockBuilder().normalize(call).struct_info


def _x(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape).astype("float32")


STRUCT_INFO = [  # (subscripts, operand struct info, result)
    ("ij,jk->ik", [t(N, 3), t(3, 5)], 'R.Tensor((n, 5), dtype="float32")'),
    ("ij,jk", [t(2, 3), t(3, N)], 'R.Tensor((2, n), dtype="float32")'),
    ("ba,ca", [t(2, 3), t(4, 3)], 'R.Tensor((2, 4), dtype="float32")'),
    ("ii->i", [t(N, N)], 'R.Tensor((n,), dtype="float32")'),
    ("ii", [t(4, 4)], 'R.Tensor((), dtype="float32")'),
    ("...ij,...jk->...ik", [t(N, 1, 2, 3), t(5, 3, 4)], 'R.Tensor((n, 5, 2, 4), dtype="float32")'),
    ("i...j,j", [t(2, 3, 4, 5), t(5)], 'R.Tensor((3, 4, 2), dtype="float32")'),
    ("ij,ij->ij", [t(1, 3), t(N, 3)], 'R.Tensor((n, 3), dtype="float32")'),
    ("i...->", [t(2, 3, 4)], 'R.Tensor((), dtype="float32")'),
    ("ij,jk", [R.TensorStructInfo(ndim=-1, dtype="float16"), t(3, 4, dtype="float16")],
     'R.Tensor(dtype="float16", ndim=2)'),
    ("...ij,jk", [R.TensorStructInfo(ndim=3, dtype="float32"), t(3, 4)], 'R.Tensor(dtype="float32", ndim=3)'),
    ("...i,...i", [R.TensorStructInfo(ndim=-1, dtype="float32"), t(3, 4)], 'R.Tensor(dtype="float32")'),
]


@pytest.mark.parametrize("subscripts,sinfos,expected", STRUCT_INFO)
def test_struct_info(subscripts, sinfos, expected):
    assert repr(_sinfo(einsum(_vars(*sinfos), subscripts))) == expected


def test_tuple_variable_operands_and_outer_struct_info():
    tup = R.Var("tup", R.TupleStructInfo([t(2, 3), t(3, 4)]))
    assert repr(_sinfo(einsum(tup, "ij,jk->ik"))) == 'R.Tensor((2, 4), dtype="float32")'
    a, b = _vars(t(N), t(3))
    assert repr(_sinfo(outer(a, b))) == 'R.Tensor((n, 3), dtype="float32")'
    c = R.Var("c", R.TensorStructInfo(ndim=1, dtype="float32"))
    assert repr(_sinfo(outer(a, c))) == 'R.Tensor(dtype="float32", ndim=2)'
    for name in ("einsum", "outer"):
        assert R.op.Op.get(f"relax.{name}").pattern == R.op.OpPatternKind.kOutEWiseFusable


ERRORS = [  # (subscripts, operand struct info, message)
    ("ij,jk->ik", [t(2, 3)], r"'einsum': einsum subscripts 'ij,jk->ik' name 2 operand\(s\), got 1"),
    ("ij->i->j", [t(2, 3)], r"'einsum': einsum subscripts 'ij->i->j' have more than one '->'"),
    ("i.j", [t(2, 3)], r"operand 0 'i.j' has a '.' that is not one '...'"),
    ("i1", [t(2, 3)], r"operand 0 'i1' has '1'; use letters a-z, A-Z and one '...'"),
    ("ij->ii", [t(2, 3)], r"output letter 'i' appears twice"),
    ("ij->k", [t(2, 3)], r"output letter 'k' is in no operand"),
    ("ijk", [t(2, 3)], r"'einsum' expects operand 0 to fit subscripts 'ijk': einsum term 'ijk' needs 3 "
                       r"dimension\(s\), got 2; operand 0 is R.Tensor\(\(2, 3\)"),
    ("ij...k", [t(2, 3)], r"einsum term 'ij...k' needs at least 3 dimension\(s\), got 2"),
    ("ij,jk", [t(2, 3), t(4, 5)], r"'einsum' expects the dimensions labelled 'j' in 'ij,jk' to match: 3 in "
                                  r"operand 0 R.Tensor\(\(2, 3\), dtype=\"float32\"\) and 4 in operand 1"),
    ("ii", [t(2, 3)], r"labelled 'i' in 'ii' to match: 2 in operand 0 .* and 3 in operand 0"),
    ("...i,...i", [t(2, 3), t(4, 3)], r"'einsum' cannot broadcast the '...' of operand 0 .* with that of "
                                      r"operand 1 .*: dimension 0 is 2 .* and 4"),
    ("ij,jk", [t(2, 3), t(3, 4, dtype="float16")],
     r"'einsum' expects equal dtypes, got float32 and float16: operand 0 is R.Tensor\(\(2, 3\), "
     r"dtype=\"float32\"\), operand 1 is R.Tensor\(\(3, 4\), dtype=\"float16\"\); cast one"),
    ("i", [R.TupleStructInfo([])],
     r"'einsum' expects operand 0 to be a tensor \(R.Tensor\), got R.Tuple\(\)"),
]


@pytest.mark.parametrize("subscripts,sinfos,message", ERRORS)
def test_errors(subscripts, sinfos, message):
    with pytest.raises(TypeInferenceError, match=message):
        _sinfo(einsum(_vars(*sinfos), subscripts))


def test_operand_errors_and_outer_errors():
    x = R.Var("x", t(2, 3))
    with pytest.raises(TypeInferenceError, match=r"'einsum' expects operands to be a tuple of tensors "
                                                 r"\(R.Tuple\), got R.Tensor\(\(2, 3\)"):
        _sinfo(R.Call(R.Op.get("relax.einsum"), [x], {"subscripts": "ij"}))
    with pytest.raises(TypeInferenceError, match=r"expects at least one operand, got an empty tuple"):
        _sinfo(einsum([], "->"))
    v = R.Var("v", t(3))
    with pytest.raises(TypeInferenceError, match=r"'outer' expects x1 to be 1-dimensional, got R.Tensor"):
        _sinfo(outer(x, v))
    with pytest.raises(TypeInferenceError, match=r"'outer' expects equal dtypes, got float32 and int32"):
        _sinfo(outer(v, R.Var("i", t(3, dtype="int32"))))
    with pytest.raises(TypeInferenceError, match=r"'outer' expects argument x2 to be a tensor"):
        _sinfo(outer(v, R.Var("tup", R.TupleStructInfo([]))))


def test_script_round_trip():
    x, w, v = R.Var("x", t(N, 3)), R.Var("w", t(3, 4)), R.Var("v", t(4))
    bb = R.BlockBuilder()
    with bb.function("main", [x, w, v]):
        with bb.dataflow():
            lv = bb.emit(einsum((x, w), "ij,jk->ik"))
            lv1 = bb.emit(einsum([lv, v], "...k,k"))
            gv = bb.emit_output(outer(lv1, v))
        bb.emit_func_output(gv)
    mod = bb.get()
    text = mod.script()
    assert 'R.einsum((x, w), subscripts="ij,jk->ik")' in text and "R.outer(lv1, v)" in text
    parsed = from_source(text)
    assert structural_equal(parsed["main"], mod["main"]) and parsed.script() == text


NUMERICS = [  # (subscripts, struct-info shapes, run shapes)
    ("ij,jk->ik", [(N, 3), (3, 4)], [(5, 3), (3, 4)]),
    ("ij,jk", [(2, 3), (3, 4)], [(2, 3), (3, 4)]),
    ("bij,bjk->bik", [(N, 2, 3), (N, 3, 4)], [(3, 2, 3), (3, 3, 4)]),
    ("ii->i", [(3, 3)], [(3, 3)]),
    ("ii", [(N, N)], [(4, 4)]),
    ("ij->", [(2, 3)], [(2, 3)]),
    ("ij->ji", [(2, 3)], [(2, 3)]),
    ("i,j->ij", [(3,), (4,)], [(3,), (4,)]),
    ("...ij,...jk->...ik", [(2, 1, 2, 3), (5, 3, 4)], [(2, 1, 2, 3), (5, 3, 4)]),
    ("...ij,...jk", [(N, 2, 3), (3, 4)], [(3, 2, 3), (3, 4)]),
    ("a...b,b->a...", [(2, 3, 4, 5), (5,)], [(2, 3, 4, 5), (5,)]),
    ("ij,ij->ij", [(1, 3), (2, 3)], [(1, 3), (2, 3)]),
    ("bhqd,bhkd->bhqk", [(1, 2, 3, 4), (1, 2, 5, 4)], [(1, 2, 3, 4), (1, 2, 5, 4)]),
    ("i,i,i->", [(4,), (4,), (4,)], [(4,), (4,), (4,)]),
    ("Ab,bA", [(2, 3), (3, 2)], [(2, 3), (3, 2)]),
    ("i...->...", [(3, 2, 4)], [(3, 2, 4)]),  # numpy agrees: '...' is kept
]


@pytest.mark.parametrize("subscripts,shapes,run_shapes", NUMERICS)
def test_einsum_numerics(legalize_run, subscripts, shapes, run_shapes):
    arrays = [_x(s, k) for k, s in enumerate(run_shapes)]
    out = legalize_run(lambda *a: einsum(a, subscripts), [t(*s) for s in shapes], arrays, "einsum")[0]
    np.testing.assert_allclose(out, np.einsum(subscripts, *arrays), rtol=1e-5, atol=1e-5)


def test_einsum_sums_dropped_ellipsis_like_torch(legalize_run):
    arrays = [_x((2, 3, 4), 1), _x((4,), 2)]
    out = legalize_run(lambda *a: einsum(a, "...i,i->"), [t(2, 3, 4), t(4)], arrays, "einsum")[0]
    ref = torch.einsum("...i,i->", *[torch.from_numpy(a) for a in arrays]).numpy()
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5)


def test_einsum_of_a_tuple_variable_legalizes():
    a, b = R.Var("a", t(2, 3)), R.Var("b", t(3, 4))
    bb = R.BlockBuilder()
    with bb.function("main", [a, b]):
        with bb.dataflow():
            tup = bb.emit(R.Tuple([a, b]))
            gv = bb.emit_output(einsum(tup, "ij,jk->ik"))
        bb.emit_func_output(gv)
    mod = R.transform.LegalizeOps()(bb.get())
    assert R.analysis.well_formed(mod)
    call = mod["main"].body.blocks[0].bindings[-1].value
    assert call.op is R.Op.get("relax.call_tir") and call.args[0].name_hint == "einsum"
    assert repr(call.struct_info) == 'R.Tensor((2, 4), dtype="float32")'


@pytest.mark.parametrize("shapes,run_shapes", [([(3,), (4,)], [(3,), (4,)]), ([(N,), (N,)], [(5,), (5,)])])
def test_outer_numerics(legalize_run, shapes, run_shapes):
    arrays = [_x(s, k) for k, s in enumerate(run_shapes)]
    out = legalize_run(outer, [t(*s) for s in shapes], arrays, "outer")[0]
    np.testing.assert_allclose(out, np.outer(*arrays), rtol=1e-6)
