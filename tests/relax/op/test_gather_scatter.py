"""gather_elements / gather_nd / scatter_elements / scatter_nd / one_hot: struct info, errors,
legalized numerics against numpy and torch (negative indices, every reduction)."""

import numpy as np
import pytest
import torch

from graphc import relax, tir
from graphc.errors import TypeInferenceError
from graphc.ir import structural_equal
from graphc.script import from_source

R = relax
N = tir.Var("n", "int64")
SHAPES = [((5, 4), (5, 4)), ((N, 4), (6, 4))]
RNG = np.random.default_rng(0)


def _x(run_shape):
    return RNG.uniform(0.5, 2.0, run_shape).astype("float32")


def _wrap(indices, dim):
    return np.where(indices < 0, indices + dim, indices)


@pytest.mark.parametrize("shape,run_shape", SHAPES)
@pytest.mark.parametrize("index_dtype", ["int64", "int32"])
def test_gather_elements_numerics(legalize_run, shape, run_shape, index_dtype):
    x = _x(run_shape)
    for axis, ishape in ((0, (3, 4)), (1, (2, 3)), (-1, (run_shape[0], 2))):
        dim = x.shape[axis]
        idx = RNG.integers(-dim, dim, ishape).astype(index_dtype)
        sinfos = [R.TensorStructInfo(shape, "float32"), R.TensorStructInfo(ishape, index_dtype)]
        out = legalize_run(lambda a, i: R.op.gather_elements(a, i, axis), sinfos, [x, idx])[0]
        expect = torch.gather(torch.from_numpy(x), axis, torch.from_numpy(_wrap(idx, dim)).long()).numpy()
        np.testing.assert_array_equal(out, expect)


def test_gather_elements_symbolic_indices(legalize_run):
    x = _x((3, 5))
    idx = np.array([[4, -1, 0], [2, 2, -5], [1, 0, 3]], dtype="int64")
    sinfos = [R.TensorStructInfo((3, 5), "float32"), R.TensorStructInfo((N, 3), "int64")]
    out = legalize_run(lambda a, i: R.op.gather_elements(a, i, 1), sinfos, [x, idx])[0]
    np.testing.assert_array_equal(out, np.take_along_axis(x, _wrap(idx, 5), 1))


def _gather_nd_ref(data, indices, batch_dims):
    """ONNX GatherND, written out with numpy."""
    batch = data.shape[:batch_dims]
    out = []
    data_b = data.reshape((-1,) + data.shape[batch_dims:])
    idx_b = indices.reshape((-1,) + indices.shape[batch_dims:])
    for d, i in zip(data_b, idx_b):
        flat = i.reshape(-1, i.shape[-1])
        picked = [d[tuple(_wrap(p, np.array(d.shape[: len(p)])))] for p in flat]
        out.append(np.stack(picked).reshape(i.shape[:-1] + d.shape[i.shape[-1] :]))
    return np.stack(out).reshape(batch + out[0].shape)


@pytest.mark.parametrize("shape,run_shape", [((3, 4, 5), (3, 4, 5)), ((N, 4, 5), (3, 4, 5))])
def test_gather_nd_numerics(legalize_run, shape, run_shape):
    x = _x(run_shape)
    cases = [
        (0, np.array([[0, 1], [-1, 3], [2, -2]])),  # pairs into the first two axes
        (0, np.array([[[1]], [[-3]]])),  # whole rows
        (0, np.array([[0, 1, 2], [2, 3, -1]])),  # single elements
        (1, np.array([[[1, 2]], [[0, -1]], [[3, 4]]])),  # one batch axis
    ]
    for batch_dims, idx in cases:
        idx = idx.astype("int64")
        sinfos = [R.TensorStructInfo(shape, "float32"), R.TensorStructInfo(idx.shape, "int64")]
        out = legalize_run(lambda a, i: R.op.gather_nd(a, i, batch_dims), sinfos, [x, idx], "gather_nd")[0]
        np.testing.assert_array_equal(out, _gather_nd_ref(x, idx, batch_dims))


TORCH_REDUCE = {"add": "sum", "mul": "prod", "mean": "mean", "max": "amax", "min": "amin"}


@pytest.mark.parametrize("shape,run_shape", SHAPES)
@pytest.mark.parametrize("reduction", ["update", "add", "mul", "mean", "max", "min"])
def test_scatter_elements_numerics(legalize_run, shape, run_shape, reduction):
    x = _x(run_shape)
    for axis, ishape in ((0, (3, 4)), (1, (2, 3)), (-1, (2, 4))):
        dim = x.shape[axis]
        # duplicates on purpose: several updates land on one element
        idx = RNG.integers(-dim, dim, ishape).astype("int64")
        upd = _x(ishape)
        sinfos = [R.TensorStructInfo(shape, "float32"), R.TensorStructInfo(ishape, "int64"),
                  R.TensorStructInfo(ishape, "float32")]  # fmt: skip
        out = legalize_run(
            lambda a, i, u: R.op.scatter_elements(a, i, u, axis, reduction), sinfos, [x, idx, upd],
            "scatter_elements",
        )[0]  # fmt: skip
        target = torch.from_numpy(_wrap(idx, dim))
        if reduction == "update":
            expect = x.copy()  # the last update in row-major order wins
            for pos in np.ndindex(idx.shape):
                at = list(pos)
                at[axis] = target[pos]
                expect[tuple(at)] = upd[pos]
        else:
            src = torch.from_numpy(upd)
            expect = torch.from_numpy(x).scatter_reduce(axis, target, src, TORCH_REDUCE[reduction])
            expect = expect.numpy()  # include_self (the default): data takes part
        np.testing.assert_allclose(out, expect, rtol=1e-6, err_msg=f"axis={axis}")


def test_scatter_elements_integer_mean(legalize_run):
    x = np.array([[1, 2, 3]], dtype="int32")
    idx = np.array([[0, 0, 2]], dtype="int32")
    upd = np.array([[4, 6, 5]], dtype="int32")
    sinfos = [R.TensorStructInfo((1, 3), "int32"), R.TensorStructInfo((1, 3), "int32"),
              R.TensorStructInfo((1, 3), "int32")]  # fmt: skip
    out = legalize_run(lambda a, i, u: R.op.scatter_elements(a, i, u, 1, "mean"), sinfos, [x, idx, upd])[0]
    expect = torch.from_numpy(x).scatter_reduce(
        1, torch.from_numpy(idx).long(), torch.from_numpy(upd), "mean"
    )
    np.testing.assert_array_equal(out, expect.numpy())


@pytest.mark.parametrize("mode,bad", [("raise", 4), ("raise", -5), ("nonnegative", -1), ("nonnegative", 4)])
def test_scatter_out_of_range_index_raises(legalize_run, mode, bad):
    x = _x((4,))
    idx, upd = np.array([1, bad, 2], dtype="int64"), _x((3,))
    sinfos = [R.TensorStructInfo((4,), "float32"), R.TensorStructInfo((3,), "int64"),
              R.TensorStructInfo((3,), "float32")]  # fmt: skip
    lo = -4 if mode == "raise" else 0
    with pytest.raises(IndexError, match=rf"index {bad} in x1 is out of range \[{lo}, 4\) for axis 0 of x0"):
        legalize_run(lambda a, i, u: R.op.scatter_elements(a, i, u, mode=mode), sinfos, [x, idx, upd])


def _scatter_nd_ref(data, indices, updates, reduction):
    out = data.copy()
    combine = {"update": lambda a, b: b, "add": np.add, "mul": np.multiply, "max": np.maximum,
               "min": np.minimum}[reduction]  # fmt: skip
    depth = indices.shape[-1]
    for pos in np.ndindex(indices.shape[:-1]):
        at = tuple(_wrap(indices[pos], np.array(data.shape[:depth])))
        out[at] = combine(out[at], updates[pos])
    return out


@pytest.mark.parametrize("shape,run_shape", [((4, 3, 2), (4, 3, 2)), ((N, 3, 2), (5, 3, 2))])
@pytest.mark.parametrize("reduction", ["update", "add", "mul", "max", "min"])
def test_scatter_nd_numerics(legalize_run, shape, run_shape, reduction):
    x = _x(run_shape)
    cases = [
        np.array([[1], [-1], [1]]),  # whole (3, 2) slices, one of them twice
        np.array([[0, 2], [3, -1], [0, 2], [1, 0]]),  # rows of length 2
        np.array([[[0, 1, 1], [2, -3, 0]]]),  # single elements, indices of rank 3
    ]
    for idx in cases:
        idx = idx.astype("int64")
        upd = _x(idx.shape[:-1] + x.shape[idx.shape[-1] :])
        ushape = idx.shape[:-1] + tuple(shape[idx.shape[-1] :])
        sinfos = [R.TensorStructInfo(shape, "float32"), R.TensorStructInfo(idx.shape, "int64"),
                  R.TensorStructInfo(ushape, "float32")]  # fmt: skip
        out = legalize_run(
            lambda a, i, u: R.op.scatter_nd(a, i, u, reduction), sinfos, [x, idx, upd], "scatter_nd"
        )[0]
        np.testing.assert_allclose(out, _scatter_nd_ref(x, idx, upd, reduction), rtol=1e-6)


@pytest.mark.parametrize("shape,run_shape", [((2, 3), (2, 3)), ((N, 3), (4, 3))])
def test_one_hot_numerics(legalize_run, shape, run_shape):
    idx = RNG.integers(-1, 5, run_shape).astype("int64")  # -1 and 4 match nothing at depth 4
    sinfo = [R.TensorStructInfo(shape, "int64")]
    on, off = tir.const(2.5, "float32"), tir.const(-1.0, "float32")
    for axis in (-1, 0, 1, 2):
        out = legalize_run(lambda i: R.op.one_hot(i, on, off, 4, axis), sinfo, [idx], "one_hot")[0]
        hot = np.moveaxis(np.eye(5, 4, dtype="float32")[np.where(idx < 0, 4, idx)], -1, axis)
        np.testing.assert_array_equal(out, np.where(hot == 1, 2.5, -1.0).astype("float32"))
    out = legalize_run(lambda i: R.op.one_hot(i, 1, 0, 6), sinfo, [idx])[0]
    assert out.dtype == np.int64
    np.testing.assert_array_equal(out, torch.nn.functional.one_hot(torch.from_numpy(idx % 6), 6).numpy()
                                  * (idx >= 0)[..., None])  # fmt: skip


def test_struct_info():
    bb = R.BlockBuilder()
    x = R.Var("x", R.TensorStructInfo((N, 4, 5), "float32"))
    i = R.Var("i", R.TensorStructInfo((N, 2, 2), "int32"))
    assert repr(bb.normalize(R.op.gather_elements(x, i, 1)).struct_info) == (
        'R.Tensor((n, 2, 2), dtype="float32")'
    )
    assert repr(bb.normalize(R.op.gather_nd(x, i)).struct_info) == 'R.Tensor((n, 2, 5), dtype="float32")'
    assert repr(bb.normalize(R.op.gather_nd(x, i, batch_dims=1)).struct_info) == (
        'R.Tensor((n, 2), dtype="float32")'
    )
    v = R.Var("v", R.TensorStructInfo((N, 2, 2), "float32"))
    assert repr(bb.normalize(R.op.scatter_elements(x, i, v, 2)).struct_info) == (
        'R.Tensor((n, 4, 5), dtype="float32")'
    )
    upd = R.Var("u", R.TensorStructInfo((N, 2, 5), "float32"))
    assert repr(bb.normalize(R.op.scatter_nd(x, i, upd, "max")).struct_info) == (
        'R.Tensor((n, 4, 5), dtype="float32")'
    )
    on = R.PrimValue(tir.const(1, "int8"))
    assert repr(bb.normalize(R.op.one_hot(i, on, on, 3, 0)).struct_info) == (
        'R.Tensor((3, n, 2, 2), dtype="int8")'
    )
    unknown = R.Var("y", R.TensorStructInfo(dtype="float32", ndim=-1))
    assert bb.normalize(R.op.gather_nd(unknown, i)).struct_info.ndim == -1
    j = R.Var("j", R.TensorStructInfo(dtype="int64", ndim=3))
    assert bb.normalize(R.op.gather_elements(x, j, 0)).struct_info.ndim == 3
    patterns = {"gather_elements": "kInjective", "gather_nd": "kInjective", "one_hot": "kInjective",
                "scatter_elements": "kOpaque", "scatter_nd": "kOpaque"}  # fmt: skip
    for name, pattern in patterns.items():
        assert R.op.Op.get(f"relax.{name}").pattern.name == pattern


def _err(match):
    return pytest.raises(TypeInferenceError, match=match)


def test_gather_errors():
    bb = R.BlockBuilder()
    x = R.Var("x", R.TensorStructInfo((N, 4, 5), "float32"))
    i = R.Var("i", R.TensorStructInfo((N, 2, 2), "int64"))
    with _err(r"'gather_elements' expects indices to be an integer tensor, got R.Tensor\(\(n, 4, 5\)"):
        bb.normalize(R.op.gather_elements(x, x))
    with _err(r"'gather_elements' expects axis in \[-3, 3\) for a 3-d tensor, got 3"):
        bb.normalize(R.op.gather_elements(x, i, 3))
    with _err("'gather_elements' expects data and indices of one rank, got data R.Tensor"):
        bb.normalize(R.op.gather_elements(x, R.Var("j", R.TensorStructInfo((2, 2), "int64"))))
    with _err(r"'gather_elements' expects indices no larger than data on every axis but 0.*\(dimension 2\)"):
        bb.normalize(R.op.gather_elements(x, R.Var("j", R.TensorStructInfo((2, 2, 6), "int64"))))
    with _err("'gather_elements' expects argument data to be a tensor"):
        bb.normalize(R.op.gather_elements(R.ShapeExpr([2]), i))
    with _err("'gather_nd' expects indices to be an integer tensor"):
        bb.normalize(R.op.gather_nd(x, x))
    with _err("'gather_nd' expects batch_dims >= 0, got -1"):
        bb.normalize(R.op.gather_nd(x, i, -1))
    with _err(r"'gather_nd' expects batch_dims \(3\) at most data's rank and below indices' rank"):
        bb.normalize(R.op.gather_nd(x, i, 3))
    with _err(r"'gather_nd' expects the last dimension of indices \(4\) to be at most data's rank minus "
              r"batch_dims \(3\)"):  # fmt: skip
        bb.normalize(R.op.gather_nd(x, R.Var("j", R.TensorStructInfo((2, 4), "int64"))))
    with _err("'gather_nd' expects data and indices to agree on the 1 batch dimensions"):
        bb.normalize(R.op.gather_nd(R.Var("y", R.TensorStructInfo((3, 4), "float32")),
                                    R.Var("j", R.TensorStructInfo((2, 1), "int64")), 1))  # fmt: skip


def test_scatter_errors():
    bb = R.BlockBuilder()
    x = R.Var("x", R.TensorStructInfo((N, 4), "float32"))
    i = R.Var("i", R.TensorStructInfo((2, 4), "int64"))
    u = R.Var("u", R.TensorStructInfo((2, 4), "float32"))
    with _err("'scatter_elements' expects reduction to be one of update, add, mul, mean, max, min, "
              "got 'sum'"):  # fmt: skip
        bb.normalize(R.op.scatter_elements(x, i, u, reduction="sum"))
    with _err("'scatter_nd' expects reduction to be one of update, add, mul, max, min, got 'mean'"):
        bb.normalize(R.op.scatter_nd(x, i, u, reduction="mean"))
    with _err(r"'scatter_elements' expects updates to have data's dtype float32, got updates "
              r"R.Tensor\(\(2, 4\), dtype=\"int64\"\)"):  # fmt: skip
        bb.normalize(R.op.scatter_elements(x, i, i))
    with _err("'scatter_elements' expects indices to be an integer tensor"):
        bb.normalize(R.op.scatter_elements(x, u, u))
    with _err(r"'scatter_elements' expects axis in \[-2, 2\)"):
        bb.normalize(R.op.scatter_elements(x, i, u, axis=2))
    with _err("'scatter_elements' expects updates to have data's rank 2, got updates"):
        bb.normalize(R.op.scatter_elements(x, i, R.Var("v", R.TensorStructInfo((8,), "float32"))))
    with _err("'scatter_elements' expects indices and updates of one shape"):
        bb.normalize(R.op.scatter_elements(x, i, R.Var("v", R.TensorStructInfo((3, 4), "float32"))))
    with _err("'scatter_elements' expects indices no larger than data on every axis but 0"):
        wide = R.Var("w", R.TensorStructInfo((2, 5), "int64"))
        bb.normalize(R.op.scatter_elements(x, wide, R.Var("v", R.TensorStructInfo((2, 5), "float32"))))
    with _err("'scatter_nd' expects the last dimension of indices to be a constant"):
        bb.normalize(R.op.scatter_nd(x, R.Var("j", R.TensorStructInfo((2, N), "int64")), u))
    with _err(r"'scatter_nd' expects the last dimension of indices \(3\) to be at most data's rank"):
        bb.normalize(R.op.scatter_nd(x, R.Var("j", R.TensorStructInfo((2, 3), "int64")), u))
    with _err(r"'scatter_nd' expects updates shaped indices.shape\[:-1\] \+ data.shape\[1:\], that is "
              r"R.Tensor\(\(2, 4\), dtype=\"float32\"\), got updates R.Tensor\(\(2, 5\)"):  # fmt: skip
        j = R.Var("j", R.TensorStructInfo((2, 1), "int64"))
        bb.normalize(R.op.scatter_nd(x, j, R.Var("v", R.TensorStructInfo((2, 5), "float32"))))
    with _err(r"'scatter_nd' expects updates shaped .* got updates R.Tensor\(\(2,\)"):
        bb.normalize(R.op.scatter_nd(x, j, R.Var("v", R.TensorStructInfo((2,), "float32"))))
    with _err("'scatter_nd' expects updates to have data's dtype float32"):
        bb.normalize(R.op.scatter_nd(x, j, R.Var("v", R.TensorStructInfo((2, 4), "float16"))))


def test_one_hot_errors():
    bb = R.BlockBuilder()
    i = R.Var("i", R.TensorStructInfo((N, 2), "int64"))
    on, off = R.PrimValue(tir.const(1.0, "float32")), R.PrimValue(tir.const(0.0, "float16"))
    with _err(r"'one_hot' expects on_value and off_value of one dtype, got float32 "
              r"\(R.Prim\(value=T.float32\(1.0\)\)\) and float16"):  # fmt: skip
        bb.normalize(R.op.one_hot(i, on, off, 3))
    with _err("'one_hot' expects a positive depth, got 0"):
        bb.normalize(R.op.one_hot(i, on, on, 0))
    with _err(r"'one_hot' expects axis in \[-3, 3\) for a 3-d tensor, got 3"):
        bb.normalize(R.op.one_hot(i, on, on, 2, 3))
    with _err("'one_hot' expects indices to be an integer tensor"):
        bb.normalize(R.op.one_hot(R.Var("f", R.TensorStructInfo((2,), "float32")), on, on, 2))
    with _err("'one_hot' expects on_value to be a scalar"):
        bb.normalize(R.Call(R.Op.get("relax.one_hot"), [i, i, on], {"depth": 2, "axis": -1}))


def test_print_parse_round_trip():
    x = R.Var("x", R.TensorStructInfo((N, 4), "float32"))
    i = R.Var("i", R.TensorStructInfo((2, 4), "int64"))
    j = R.Var("j", R.TensorStructInfo((3, 1), "int64"))
    bb = R.BlockBuilder()
    with bb.function("main", [x, i, j]):
        with bb.dataflow():
            a = bb.emit(R.op.gather_elements(x, i, axis=1))
            b = bb.emit(R.op.scatter_elements(x, i, a, axis=0, reduction="mean"))
            c = bb.emit(R.op.gather_nd(b, j, batch_dims=0))
            d = bb.emit(R.op.scatter_nd(x, j, c, reduction="add"))
            e = bb.emit(R.op.one_hot(i, tir.const(1.0, "float32"), tir.const(0.0, "float32"), 3, axis=0))
            gv = bb.emit_output(R.Tuple([d, e]))
        bb.emit_func_output(gv)
    func = bb.get()["main"]
    text = func.script()
    assert 'R.scatter_elements(x, i, lv, axis=0, reduction="mean", mode="raise")' in text
    assert structural_equal(from_source(text), func)
