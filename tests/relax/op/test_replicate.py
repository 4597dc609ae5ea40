"""flip / tile / repeat: struct info, errors, legalized numerics."""

import numpy as np
import pytest

from graphc import relax, tir
from graphc.errors import TypeInferenceError

R = relax
N = tir.Var("n", "int64")
SHAPES = [((2, 3), (2, 3)), ((N, 3), (4, 3))]


def _x(run_shape):
    return np.arange(np.prod(run_shape), dtype="float32").reshape(run_shape)


@pytest.mark.parametrize("shape,run_shape", SHAPES)
def test_flip_tile_repeat_numerics(legalize_run, shape, run_shape):
    x, sinfo = _x(run_shape), [R.TensorStructInfo(shape, "float32")]
    for axis in (0, -1):
        np.testing.assert_array_equal(
            legalize_run(lambda a: R.op.flip(a, axis), sinfo, [x], "flip")[0], np.flip(x, axis)
        )
    for reps in ((2, 1), (3,), (2, 1, 2)):
        np.testing.assert_array_equal(
            legalize_run(lambda a: R.op.tile(a, reps), sinfo, [x], "tile")[0], np.tile(x, reps)
        )
    for axis in (None, 0, 1):
        np.testing.assert_array_equal(
            legalize_run(lambda a: R.op.repeat(a, 2, axis), sinfo, [x], "repeat")[0], np.repeat(x, 2, axis)
        )


def test_struct_info_and_errors():
    bb = R.BlockBuilder()
    x = R.Var("x", R.TensorStructInfo((N, 3), "float32"))
    assert repr(bb.normalize(R.op.flip(x, 1)).struct_info) == 'R.Tensor((n, 3), dtype="float32")'
    with pytest.raises(TypeInferenceError, match="'flip' expects axis in \\[-2, 2\\)"):
        bb.normalize(R.op.flip(x, 2))
    with pytest.raises(TypeInferenceError, match="'tile' expects non-negative repeats"):
        bb.normalize(R.op.tile(x, (-1,)))
    with pytest.raises(TypeInferenceError, match="'repeat' expects non-negative repeats"):
        bb.normalize(R.op.repeat(x, -2))
