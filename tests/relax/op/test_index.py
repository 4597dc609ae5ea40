"""strided_slice / take: struct info, errors, legalized numerics."""

import numpy as np
import pytest

from graphc import relax, tir
from graphc.errors import TypeInferenceError

R = relax
N = tir.Var("n", "int64")
SHAPES = [((4, 6), (4, 6)), ((N, 6), (7, 6))]


def _x(run_shape):
    return np.arange(np.prod(run_shape), dtype="float32").reshape(run_shape)


@pytest.mark.parametrize("shape,run_shape", SHAPES)
def test_strided_slice_numerics(legalize_run, shape, run_shape):
    x, sinfo = _x(run_shape), [R.TensorStructInfo(shape, "float32")]
    cases = [
        (([1], [1], [5], [2]), np.s_[:, 1:5:2]),
        (([0, 1], [1, -4], [100, -1], None), np.s_[1:100, -4:-1]),
        (([0], [-2], [10], None), np.s_[-2:10]),
        (([1], [5], [0], [-2]), np.s_[:, 5:0:-2]),
    ]
    for (axes, begin, end, strides), key in cases:
        out = legalize_run(
            lambda a: R.op.strided_slice(a, axes, begin, end, strides), sinfo, [x], "strided_slice"
        )[0]
        np.testing.assert_array_equal(out, x[key])


@pytest.mark.parametrize("shape,run_shape", SHAPES)
def test_take_numerics(legalize_run, shape, run_shape):
    x = _x(run_shape)
    idx = np.array([[0, 3], [2, 2]], dtype="int64")
    sinfos = [R.TensorStructInfo(shape, "float32"), R.TensorStructInfo((2, 2), "int64")]
    for axis in (0, 1, None):
        out = legalize_run(lambda a, i: R.op.take(a, i, axis), sinfos, [x, idx], "take")[0]
        np.testing.assert_array_equal(out, np.take(x, idx, axis=axis))
    big = np.array([[9, -1], [1, 40]], dtype="int64")
    out = legalize_run(lambda a, i: R.op.take(a, i, 1, mode="clip"), sinfos, [x, big])[0]
    np.testing.assert_array_equal(out, np.take(x, big, axis=1, mode="clip"))
    out = legalize_run(lambda a, i: R.op.take(a, i, 1, mode="wrap"), sinfos, [x, big])[0]
    np.testing.assert_array_equal(out, np.take(x, big, axis=1, mode="wrap"))


def test_struct_info_and_errors():
    bb = R.BlockBuilder()
    x = R.Var("x", R.TensorStructInfo((N, 6), "float32"))
    sinfo = bb.normalize(R.op.strided_slice(x, [0, 1], [1, 1], [3, 5])).struct_info
    assert (
        repr(sinfo) == 'R.Tensor((T.max(T.min(n, 3) - T.min(n, 1), 0), 4), dtype="float32")'
        or sinfo.shape_values[1].value == 4
    )
    with pytest.raises(TypeInferenceError, match="'strided_slice' expects non-zero strides"):
        bb.normalize(R.op.strided_slice(x, [1], [0], [2], [0]))
    with pytest.raises(
        TypeInferenceError, match="'strided_slice' expects axes, begin, end and strides of one"
    ):
        bb.normalize(R.op.strided_slice(x, [1], [0, 1], [2]))
    with pytest.raises(TypeInferenceError, match="'take' expects integer indices"):
        bb.normalize(R.op.take(x, x, 0))
    with pytest.raises(TypeInferenceError, match="'take' expects axis in \\[-2, 2\\)"):
        bb.normalize(R.op.take(x, R.Var("i", R.TensorStructInfo((2,), "int32")), 2))


M = tir.Var("m", "int64")


@pytest.mark.parametrize("m", [0, 2, 7, 12])
def test_strided_slice_with_symbolic_bounds_and_stride_stays_inside(legalize_run, m):
    """Symbolic bounds are clamped into [0, n] and a symbolic stride counts as at least 1:
    whatever m is when the model runs, the slice reads only x."""
    x = _x((7, 6))
    sinfos = [R.TensorStructInfo((N, 6), "float32"), R.TensorStructInfo((M,), "int64")]
    marker = np.zeros(m, dtype="int64")
    step = max(m, 1)
    cases = [
        (([0], [0], [M], None), np.s_[:m]),
        (([0], [M], [N], None), np.s_[min(m, 7):]),
        (([0], [1], [N], [M]), np.s_[1::step]),
        (([1], [M - 1], [M + 2], None), np.s_[:, max(min(m - 1, 6), 0):min(m + 2, 6)]),
    ]
    for (axes, begin, end, strides), key in cases:
        def make(a, _):
            return R.op.strided_slice(a, axes, begin, end, strides)

        out = legalize_run(make, sinfos, [x, marker])[0]
        np.testing.assert_array_equal(out, x[key], err_msg=f"{begin}:{end}:{strides}")


def test_strided_slice_symbolic_struct_info_and_script():
    from graphc.ir import structural_equal
    from graphc.script import from_source

    x = R.Var("x", R.TensorStructInfo((1, 64), "int64"))
    y = R.Var("y", R.TensorStructInfo((2, N), "float32"))
    bb = R.BlockBuilder()
    with bb.function("main", [x, y]):
        z = bb.emit(R.op.strided_slice(x, [1], [0], [N]))
        bb.emit_func_output(z)
    mod = bb.get()
    assert repr(z.struct_info) == 'R.Tensor((1, T.min(T.max(n, 0), 64)), dtype="int64")'
    assert structural_equal(from_source(mod.script()), mod)
    with pytest.raises(TypeInferenceError, match="integer bounds"):
        R.op.strided_slice(x, [1], [0], [tir.Var("f", "float32")])


@pytest.mark.parametrize("mode,lo", [("raise", -6), ("nonnegative", 0)])
def test_take_out_of_range_raises_index_error(legalize_run, mode, lo):
    x = _x((4, 6))
    sinfos = [R.TensorStructInfo((4, 6), "float32"), R.TensorStructInfo((3,), "int64")]
    good = np.array([lo, 5, 0], dtype="int64")
    out = legalize_run(lambda a, i: R.op.take(a, i, 1, mode=mode), sinfos, [x, good])[0]
    np.testing.assert_array_equal(out, np.take(x, good, axis=1))
    for bad in (lo - 1, 6, 10**9):
        expected = rf"index {bad} in x1 is out of range \[{lo}, 6\) for axis 1 of x0"
        with pytest.raises(IndexError, match=expected):
            legalize_run(lambda a, i: R.op.take(a, i, 1, mode=mode), sinfos, [x, np.array([0, bad, 1])])


def test_take_modes():
    x = R.Var("x", R.TensorStructInfo((4, 6), "float32"))
    assert R.op.take(x, x, 0).attrs["mode"] == "raise"  # checked unless "fast" is asked for
    with pytest.raises(TypeInferenceError, match="'take' expects mode to be one of raise, nonnegative, clip"):
        R.op.take(x, x, 0, mode="trust")


def test_binding_a_symbolic_slice_bound_to_a_constant():
    x = R.Var("x", R.TensorStructInfo((1, 64), "int64"))
    y = R.Var("y", R.TensorStructInfo((2, N), "int64"))
    bb = R.BlockBuilder()
    with bb.function("main", [x, y], attrs={"num_input": 1}):
        z = bb.emit(R.op.strided_slice(x, [1], [0], [N]))
        bb.emit_func_output(z)
    bound = R.transform.BindParams("main", {"y": np.zeros((2, 5), "int64")})(bb.get())
    call = bound["main"].body.blocks[0].bindings[0].value
    assert call.attrs["end"] == (5,)
    assert repr(call.struct_info) == 'R.Tensor((1, 5), dtype="int64")'
