"""cumsum / cumprod: struct info, errors, legalized numerics against numpy and torch."""

import numpy as np
import pytest
import torch

from graphc import relax, tir
from graphc.errors import TypeInferenceError
from graphc.ir import structural_equal
from graphc.script import from_source

R = relax
N = tir.Var("n", "int64")
SHAPES = [((2, 3, 4), (2, 3, 4)), ((N, 3), (5, 3))]


def _err(match):
    return pytest.raises(TypeInferenceError, match=match)


def _exclusive(inclusive: np.ndarray, axis, identity) -> np.ndarray:
    """numpy has no exclusive scan: shift the inclusive one by one along the axis."""
    axis = 0 if axis is None else axis
    first = np.full_like(np.take(inclusive, [0], axis), identity)
    return np.concatenate([first, np.delete(inclusive, -1, axis)], axis)


@pytest.mark.parametrize("shape,run_shape", SHAPES)
@pytest.mark.parametrize("name,ref,identity", [("cumsum", np.cumsum, 0), ("cumprod", np.cumprod, 1)])
def test_scan_numerics(legalize_run, shape, run_shape, name, ref, identity):
    x = np.random.default_rng(0).uniform(0.5, 1.5, run_shape).astype("float32")
    sinfo = [R.TensorStructInfo(shape, "float32")]
    build = getattr(R.op, name)
    for axis in (None, 0, -1, 1):
        for exclusive in (False, True):
            out = legalize_run(lambda a: build(a, axis, exclusive=exclusive), sinfo, [x], name)[0]
            expect = ref(x, axis=axis)
            if exclusive:
                expect = _exclusive(expect, axis, identity)
            np.testing.assert_allclose(out, expect, rtol=1e-5)


def test_scan_dtypes(legalize_run):
    x = np.arange(1, 13, dtype="int32").reshape(3, 4)
    sinfo = [R.TensorStructInfo((3, 4), "int32")]
    out = legalize_run(lambda a: R.op.cumsum(a, 1, dtype="int64"), sinfo, [x])[0]
    assert out.dtype == np.int64
    np.testing.assert_array_equal(out, torch.cumsum(torch.from_numpy(x), 1).numpy())
    out = legalize_run(lambda a: R.op.cumprod(a, 0, dtype="float64"), sinfo, [x])[0]
    np.testing.assert_array_equal(out, np.cumprod(x, 0, dtype="float64"))


def test_struct_info_and_errors():
    bb = R.BlockBuilder()
    x = R.Var("x", R.TensorStructInfo((N, 3), "float16"))
    assert repr(bb.normalize(R.op.cumsum(x, 0)).struct_info) == 'R.Tensor((n, 3), dtype="float16")'
    assert repr(bb.normalize(R.op.cumsum(x)).struct_info) == 'R.Tensor((n * 3,), dtype="float16")'
    assert repr(bb.normalize(R.op.cumprod(x, -1, "float32")).struct_info) == (
        'R.Tensor((n, 3), dtype="float32")'
    )
    y = R.Var("y", R.TensorStructInfo(dtype="float32", ndim=3))
    assert bb.normalize(R.op.cumsum(y)).struct_info.ndim == 1
    assert bb.normalize(R.op.cumsum(y, 2)).struct_info.ndim == 3
    assert R.op.Op.get("relax.cumsum").pattern == R.op.OpPatternKind.kOpaque
    with _err(r"'cumsum' expects axis in \[-2, 2\) for a 2-d tensor, got 2$"):
        bb.normalize(R.op.cumsum(x, 2))
    with _err(r"'cumprod' expects axis in \[-2, 2\) for a 2-d tensor, got -3"):
        bb.normalize(R.op.cumprod(x, -3))
    with _err("'cumsum' expects argument data to be a tensor"):
        bb.normalize(R.op.cumsum(R.ShapeExpr([1, 2])))
    with _err("'cumsum' expects exclusive to be a bool"):
        R.op.cumsum(x, exclusive="yes")


def test_print_parse_round_trip():
    x = R.Var("x", R.TensorStructInfo((N, 3), "float32"))
    bb = R.BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            a = bb.emit(R.op.cumsum(x, 1, "float64", exclusive=True))
            gv = bb.emit_output(R.op.cumprod(a))
        bb.emit_func_output(gv)
    func = bb.get()["main"]
    text = func.script()
    assert 'R.cumsum(x, axis=1, dtype="float64", exclusive=True)' in text
    assert structural_equal(from_source(text), func)
