"""concat / split / stack: struct info, errors, legalized numerics."""

import numpy as np
import pytest

from graphc import relax, tir
from graphc.errors import TypeInferenceError

R = relax
N = tir.Var("n", "int64")


def _sinfo(shape):
    return R.TensorStructInfo(shape, "float32")


def _x(run_shape, offset=0):
    return (np.arange(np.prod(run_shape), dtype="float32") + offset).reshape(run_shape)


@pytest.mark.parametrize("n,run_n", [(2, 2), (N, 5)])
def test_concat_numerics(legalize_run, n, run_n):
    a, b, c = _x((run_n, 3)), _x((run_n, 1), 100), _x((run_n, 2), 200)
    out = legalize_run(
        lambda *t: R.op.concat(t, axis=1),
        [_sinfo((n, 3)), _sinfo((n, 1)), _sinfo((n, 2))],
        [a, b, c],
        "concatenate",
    )[0]
    np.testing.assert_array_equal(out, np.concatenate([a, b, c], axis=1))
    out = legalize_run(
        lambda *t: R.op.concat(t, axis=0), [_sinfo((n, 3)), _sinfo((4, 3))], [a, _x((4, 3), 50)]
    )[0]
    np.testing.assert_array_equal(out, np.concatenate([a, _x((4, 3), 50)]))


@pytest.mark.parametrize("n,run_n", [(2, 2), (N, 5)])
def test_stack_numerics(legalize_run, n, run_n):
    a, b = _x((run_n, 3)), _x((run_n, 3), 100)
    for axis in (0, 1, -1):
        out = legalize_run(lambda *t: R.op.stack(t, axis=axis), [_sinfo((n, 3))] * 2, [a, b], "stack")[0]
        np.testing.assert_array_equal(out, np.stack([a, b], axis=axis))


@pytest.mark.parametrize("n,run_n", [(2, 2), (N, 5)])
def test_split_numerics(legalize_run, n, run_n):
    x = _x((run_n, 6))
    outs = legalize_run(lambda a: R.op.split(a, 3, axis=1), [_sinfo((n, 6))], [x], "split")
    for got, want in zip(outs, np.split(x, 3, axis=1)):
        np.testing.assert_array_equal(got, want)
    outs = legalize_run(lambda a: R.op.split(a, [1, 4], axis=-1), [_sinfo((n, 6))], [x], "split")
    assert len(outs) == 3
    for got, want in zip(outs, np.split(x, [1, 4], axis=-1)):
        np.testing.assert_array_equal(got, want)


def test_struct_info_and_errors():
    bb = R.BlockBuilder()
    x, y = R.Var("x", _sinfo((N, 4))), R.Var("y", _sinfo((3, 4)))
    assert repr(bb.normalize(R.op.concat([x, y])).struct_info) == 'R.Tensor((n + 3, 4), dtype="float32")'
    with pytest.raises(TypeInferenceError, match="'concat' expects dimension 1 of every tensor to match"):
        bb.normalize(R.op.concat([x, R.Var("z", _sinfo((3, 5)))]))
    with pytest.raises(TypeInferenceError, match="'concat' expects tensors of one dtype"):
        bb.normalize(R.op.concat([x, R.Var("i", R.TensorStructInfo((3, 4), "int32"))]))
    with pytest.raises(TypeInferenceError, match="'stack' expects tensors of one rank"):
        bb.normalize(R.op.stack([x, R.Var("v", _sinfo((4,)))]))
    with pytest.raises(TypeInferenceError, match="'split' cannot split dimension 1 .* \\(4\\) into 3 equal"):
        bb.normalize(R.op.split(x, 3, axis=1))
    assert (
        repr(bb.normalize(R.op.split(x, [1], axis=1)).struct_info)
        == 'R.Tuple(R.Tensor((n, 1), dtype="float32"), R.Tensor((n, 3), dtype="float32"))'
    )
