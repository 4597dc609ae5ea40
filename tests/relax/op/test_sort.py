"""sort / argsort / topk: struct info, errors, legalized numerics against torch's stable sort."""

import numpy as np
import pytest
import torch

from graphc import relax, tir
from graphc.errors import TypeInferenceError
from graphc.ir import structural_equal
from graphc.script import from_source

R = relax
N = tir.Var("n", "int64")
SHAPES = [((4, 6), (4, 6)), ((N, 6), (5, 6)), ((2, 3, 5), (2, 3, 5))]


def _err(match):
    return pytest.raises(TypeInferenceError, match=match)


def _data(run_shape, dtype="float32"):
    """Few distinct values (many ties) and, for floats, a few NaNs."""
    x = np.random.default_rng(1).integers(-3, 3, run_shape).astype(dtype)
    if x.dtype.kind == "f":
        x.reshape(-1)[[1, 7, 8]] = np.nan
    return x


def _torch_sort(x, axis, descending):
    return torch.sort(torch.from_numpy(x), dim=axis, descending=descending, stable=True)


@pytest.mark.parametrize("shape,run_shape", SHAPES)
def test_sort_argsort_numerics(legalize_run, shape, run_shape):
    x, sinfo = _data(run_shape), [R.TensorStructInfo(shape, "float32")]
    for axis in (0, -1, 1):
        for descending in (False, True):
            expect = _torch_sort(x, axis, descending)
            out = legalize_run(lambda a: R.op.sort(a, axis, descending), sinfo, [x], "sort")[0]
            np.testing.assert_array_equal(out, expect.values.numpy())
            out = legalize_run(lambda a: R.op.argsort(a, axis, descending, "int64"), sinfo, [x], "argsort")[0]
            np.testing.assert_array_equal(out, expect.indices.numpy())
            if not descending:  # numpy's stable argsort agrees (NaN last)
                np.testing.assert_array_equal(out, np.argsort(x, axis=axis, kind="stable"))


def test_sort_integers_and_index_dtype(legalize_run):
    x = _data((3, 9), "int32")
    sinfo = [R.TensorStructInfo((3, 9), "int32")]
    out = legalize_run(lambda a: R.op.sort(a), sinfo, [x])[0]
    np.testing.assert_array_equal(out, np.sort(x, axis=-1))
    out = legalize_run(lambda a: R.op.argsort(a, descending=True), sinfo, [x])[0]
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, _torch_sort(x, -1, True).indices.numpy())


@pytest.mark.parametrize("shape,run_shape", SHAPES[:2])
def test_topk_numerics(legalize_run, shape, run_shape):
    x, sinfo = _data(run_shape), [R.TensorStructInfo(shape, "float32")]
    for axis in (0, 1):
        for largest in (True, False):
            expect = _torch_sort(x, axis, largest)
            for k in (1, 3, 0, 9):
                m = x.shape[axis] if k < 1 else min(k, x.shape[axis])
                values = np.take(expect.values.numpy(), range(m), axis)
                indices = np.take(expect.indices.numpy(), range(m), axis)
                both = legalize_run(lambda a: R.op.topk(a, k, axis, "both", largest), sinfo, [x], "topk")
                # a symbolic axis shorter than k keeps k positions; those past its end are zero
                np.testing.assert_array_equal(np.take(both[0], range(m), axis), values)
                np.testing.assert_array_equal(np.take(both[1], range(m), axis), indices)
                assert both[1].dtype == np.int32
                assert not np.take(both[0], range(m, both[0].shape[axis]), axis).any()
            out = legalize_run(lambda a: R.op.topk(a, 2, axis, "values", largest), sinfo, [x])[0]
            np.testing.assert_array_equal(out, np.take(expect.values.numpy(), range(2), axis))
            out = legalize_run(lambda a: R.op.topk(a, 2, axis, "indices", largest, "int64"), sinfo, [x])[0]
            np.testing.assert_array_equal(out, np.take(expect.indices.numpy(), range(2), axis))


def test_topk_matches_torch_on_distinct_values(legalize_run):
    x = np.random.default_rng(2).permutation(40).astype("float32").reshape(4, 10)
    out = legalize_run(lambda a: R.op.topk(a, 4), [R.TensorStructInfo((4, 10), "float32")], [x])
    expect = torch.topk(torch.from_numpy(x), 4)
    np.testing.assert_array_equal(out[0], expect.values.numpy())
    np.testing.assert_array_equal(out[1], expect.indices.numpy())


def test_struct_info():
    bb = R.BlockBuilder()
    x = R.Var("x", R.TensorStructInfo((N, 6), "float32"))
    assert repr(bb.normalize(R.op.sort(x, 0, True)).struct_info) == 'R.Tensor((n, 6), dtype="float32")'
    assert repr(bb.normalize(R.op.argsort(x, dtype="int64")).struct_info) == 'R.Tensor((n, 6), dtype="int64")'
    sinfo = bb.normalize(R.op.topk(x, 2, axis=0)).struct_info
    assert repr(sinfo) == 'R.Tuple(R.Tensor((2, 6), dtype="float32"), R.Tensor((2, 6), dtype="int32"))'
    assert repr(bb.normalize(R.op.topk(x, 10, ret_type="values")).struct_info) == (
        'R.Tensor((n, 6), dtype="float32")'
    )
    assert repr(bb.normalize(R.op.topk(x, -1, ret_type="indices")).struct_info) == (
        'R.Tensor((n, 6), dtype="int32")'
    )
    y = R.Var("y", R.TensorStructInfo(dtype="float32", ndim=-1))
    assert bb.normalize(R.op.topk(y, 3)).struct_info.fields[1].dtype == "int32"
    for name in ("sort", "argsort", "topk"):
        assert R.op.Op.get(f"relax.{name}").pattern == R.op.OpPatternKind.kOpaque


def test_errors():
    bb = R.BlockBuilder()
    x = R.Var("x", R.TensorStructInfo((N, 6), "float32"))
    with _err(r"'sort' expects axis in \[-2, 2\) for a 2-d tensor, got 2"):
        bb.normalize(R.op.sort(x, 2))
    with _err(r"'argsort' expects axis in \[-2, 2\) .* got -3"):
        bb.normalize(R.op.argsort(x, -3))
    with _err("'argsort' expects dtype to be an integer dtype, got float32"):
        bb.normalize(R.op.argsort(x, dtype="float32"))
    with _err("'topk' expects dtype to be an integer dtype, got bool"):
        bb.normalize(R.op.topk(x, dtype="bool"))
    with _err("'topk' expects ret_type to be 'both', 'values' or 'indices', got 'value'"):
        bb.normalize(R.op.topk(x, ret_type="value"))
    scalar = R.Var("s", R.TensorStructInfo((), "float32"))
    with _err("'sort' expects data to have at least one dimension"):
        bb.normalize(R.op.sort(scalar))
    with _err("'topk' expects argument data to be a tensor"):
        bb.normalize(R.op.topk(R.ShapeExpr([3])))


def test_print_parse_round_trip():
    x = R.Var("x", R.TensorStructInfo((N, 6), "float32"))
    bb = R.BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            a = bb.emit(R.op.sort(x, 0, descending=True))
            b = bb.emit(R.op.argsort(a, dtype="int64"))
            c = bb.emit(R.op.topk(x, 3, 0, "both", largest=False, dtype="int64"))
            gv = bb.emit_output(R.Tuple([b, c]))
        bb.emit_func_output(gv)
    func = bb.get()["main"]
    text = func.script()
    assert 'R.topk(x, k=3, axis=0, ret_type="both", largest=False, dtype="int64")' in text
    assert structural_equal(from_source(text), func)
