"""nll_loss, cross_entropy_with_logits, batch_flatten, prelu, relu6, leakyrelu: struct info,
errors and legalized numerics against numpy."""

import numpy as np
import pytest

from graphc import relax, tir
from graphc.errors import TypeInferenceError

R = relax
N = tir.Var("n", "int64")


def infer(call):
    return repr(R.BlockBuilder().normalize(call).struct_info)


def _nll_reference(pred, target, weights, reduction, ignore_index):
    w = np.ones(pred.shape[1], pred.dtype) if weights is None else weights
    picked = np.take_along_axis(pred, np.expand_dims(np.where(target == ignore_index, 0, target), 1), 1)
    picked = np.squeeze(picked, 1)
    counted = target != ignore_index
    loss = np.where(counted, -picked * w[np.where(counted, target, 0)], 0)
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    return loss.sum() / np.where(counted, w[np.where(counted, target, 0)], 0).sum()


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("with_weights", [False, True])
def test_nll_loss_numerics(legalize_run, reduction, with_weights):
    rng = np.random.default_rng(0)
    pred = rng.standard_normal((5, 4, 3)).astype("float32")
    target = rng.integers(0, 4, (5, 3)).astype("int64")
    target[0, 0] = -100  # ignored
    weights = rng.uniform(0.5, 2, (4,)).astype("float32") if with_weights else None
    sinfos = [R.TensorStructInfo((N, 4, 3), "float32"), R.TensorStructInfo((N, 3), "int64")]
    arrays = [pred, target]
    if with_weights:
        sinfos.append(R.TensorStructInfo((4,), "float32"))
        arrays.append(weights)
    out = legalize_run(lambda p, t, *w: R.op.nn.nll_loss(p, t, *w, reduction=reduction), sinfos, arrays,
                       "nll_loss")[0]
    ref = _nll_reference(pred, target, weights, reduction, -100)
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-6)


def test_nll_loss_struct_info_and_errors():
    p = R.Var("p", R.TensorStructInfo((N, 4), "float32"))
    t = R.Var("t", R.TensorStructInfo((N,), "int64"))
    assert infer(R.op.nn.nll_loss(p, t)) == 'R.Tensor((), dtype="float32")'
    assert infer(R.op.nn.nll_loss(p, t, reduction="none")) == 'R.Tensor((n,), dtype="float32")'
    with pytest.raises(TypeInferenceError, match="'nn.nll_loss' expects reduction to be one of"):
        infer(R.op.nn.nll_loss(p, t, reduction="max"))
    with pytest.raises(TypeInferenceError, match="'nn.nll_loss' requires integer targets"):
        infer(R.op.nn.nll_loss(p, p))
    with pytest.raises(TypeInferenceError, match="expects targets of rank 1"):
        infer(R.op.nn.nll_loss(p, R.Var("t2", R.TensorStructInfo((3, 2), "int64"))))


@pytest.mark.parametrize("shape", [(4, 3), (6,)])
def test_cross_entropy_with_logits(legalize_run, shape):
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal(shape).astype("float32"), rng.uniform(0, 1, shape).astype("float32")
    sinfos = [R.TensorStructInfo(shape, "float32")] * 2
    out = legalize_run(R.op.nn.cross_entropy_with_logits, sinfos, [x, y], "cross_entropy_with_logits")[0]
    ref = -(x * y).sum() / (shape[0] if len(shape) > 1 else 1)
    np.testing.assert_allclose(out, ref, rtol=1e-5)
    with pytest.raises(TypeInferenceError, match="expects labels shaped like the predictions"):
        infer(R.op.nn.cross_entropy_with_logits(R.Var("a", R.TensorStructInfo((2, 3), "float32")),
                                                R.Var("b", R.TensorStructInfo((6,), "float32"))))


def test_batch_flatten(legalize_run):
    x = np.arange(5 * 3 * 2, dtype="float32").reshape(5, 3, 2)
    out = legalize_run(R.op.nn.batch_flatten, [R.TensorStructInfo((N, 3, 2), "float32")], [x],
                       "batch_flatten")[0]
    np.testing.assert_array_equal(out, x.reshape(5, 6))
    assert infer(R.op.nn.batch_flatten(R.Var("x", R.TensorStructInfo((N, 3, 2), "float32")))) == \
        'R.Tensor((n, 6), dtype="float32")'


def test_prelu_relu6_leakyrelu(legalize_run):
    x = np.random.default_rng(2).uniform(-8, 8, (2, 3, 4)).astype("float32")
    alpha = np.array([0.1, 0.2, 0.3], dtype="float32")
    sinfo = R.TensorStructInfo((2, 3, 4), "float32")
    out = legalize_run(R.op.nn.prelu, [sinfo, R.TensorStructInfo((3,), "float32")], [x, alpha], "prelu")[0]
    np.testing.assert_allclose(out, np.where(x > 0, x, x * alpha[None, :, None]), rtol=1e-6)
    out = legalize_run(R.op.nn.relu6, [sinfo], [x], "relu6")[0]
    np.testing.assert_array_equal(out, np.clip(x, 0, 6))
    out = legalize_run(lambda a: R.op.nn.leakyrelu(a, 0.25), [sinfo], [x], "leaky_relu")[0]
    np.testing.assert_allclose(out, np.where(x > 0, x, 0.25 * x), rtol=1e-6)
    assert R.op.nn.leaky_relu(R.Var("y", sinfo)).op.name == "relax.nn.leakyrelu"  # one operator
    with pytest.raises(TypeInferenceError, match="'nn.prelu' expects alpha to be 1-d"):
        infer(R.op.nn.prelu(R.Var("y", sinfo), R.Var("a", sinfo)))
