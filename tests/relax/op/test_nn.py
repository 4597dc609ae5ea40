"""Struct info of nn operators."""

import pytest

from graphc import relax, tir
from graphc.errors import TypeInferenceError

R = relax


def test_relu_keeps_struct_info():
    n = tir.Var("n", "int64")
    x = R.Var("x", R.TensorStructInfo((n, 3), "float16"))
    call = R.BlockBuilder().normalize(R.op.nn.relu(x))
    assert call.struct_info is x.struct_info and call.op.name == "relax.nn.relu"
    y = R.Var("y", R.TensorStructInfo(ndim=-1, dtype=""))
    assert repr(R.BlockBuilder().normalize(R.op.nn.relu(y)).struct_info) == "R.Tensor()"


def test_relu_rejects_non_tensors():
    t = R.Var("t", R.TupleStructInfo([]))
    with pytest.raises(TypeInferenceError, match=r"'nn.relu' expects argument data to be a tensor "
                                                  r".* got R.Tuple\(\)"):
        R.BlockBuilder().normalize(R.op.nn.relu(t))


# --- activations, softmax, dropout, normalizations: legalized numerics ------------------------

import math  # noqa: E402

import numpy as np  # noqa: E402

N = tir.Var("n", "int64")
SHAPES = [((2, 3, 4), (2, 3, 4)), ((N, 3, 4), (5, 3, 4))]
_erf = np.vectorize(math.erf)
SELU_A, SELU_S = 1.6732632423543772, 1.0507009873554805


def _relu6(x):
    return np.minimum(np.maximum(x, 0), 6)


ACTIVATIONS = {  # name: (call, numpy reference)
    "relu": (R.op.nn.relu, lambda x: np.maximum(x, 0)),
    "leaky_relu": (lambda a: R.op.nn.leaky_relu(a, 0.1), lambda x: np.where(x > 0, x, 0.1 * x)),
    "gelu": (R.op.nn.gelu, lambda x: 0.5 * x * (1 + _erf(x / np.sqrt(2)))),
    "gelu_tanh": (R.op.nn.gelu_tanh,
                  lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))),
    "silu": (R.op.nn.silu, lambda x: x / (1 + np.exp(-x))),
    "softplus": (lambda a: R.op.nn.softplus(a, beta=2.0, threshold=3.0),
                 lambda x: np.where(2 * x > 3, x, np.log1p(np.exp(2 * x)) / 2)),
    "elu": (lambda a: R.op.nn.elu(a, 0.5), lambda x: np.where(x > 0, x, 0.5 * (np.exp(x) - 1))),
    "selu": (R.op.nn.selu, lambda x: SELU_S * np.where(x > 0, x, SELU_A * (np.exp(x) - 1))),
    "hardswish": (R.op.nn.hardswish, lambda x: x * _relu6(x + 3) / 6),
    "hardsigmoid": (R.op.nn.hardsigmoid, lambda x: _relu6(x + 3) / 6),
}


def _softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _x(run_shape, seed=5):
    return np.random.default_rng(seed).uniform(-4, 4, run_shape).astype("float32")


@pytest.mark.parametrize("shape,run_shape", SHAPES)
@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activation_numerics(legalize_run, name, shape, run_shape):
    call, ref = ACTIVATIONS[name]
    x = _x(run_shape)
    out = legalize_run(call, [R.TensorStructInfo(shape, "float32")], [x], name)[0]
    np.testing.assert_allclose(out, ref(x.astype("float64")), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("shape,run_shape", SHAPES)
def test_softmax_and_log_softmax(legalize_run, shape, run_shape):
    x = _x(run_shape)
    for axis in (-1, 0, 1):
        out = legalize_run(lambda a: R.op.nn.softmax(a, axis), [R.TensorStructInfo(shape, "float32")], [x],
                           "softmax")[0]
        np.testing.assert_allclose(out, _softmax(x, axis), rtol=1e-5, atol=1e-6)
        out = legalize_run(lambda a: R.op.nn.log_softmax(a, axis), [R.TensorStructInfo(shape, "float32")],
                           [x], "log_softmax")[0]
        np.testing.assert_allclose(out, np.log(_softmax(x, axis)), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("shape,run_shape", SHAPES)
def test_dropout_is_identity_at_inference(legalize_run, shape, run_shape):
    x = _x(run_shape)
    out, mask = legalize_run(lambda a: R.op.nn.dropout(a, 0.3), [R.TensorStructInfo(shape, "float32")], [x],
                             "dropout")
    np.testing.assert_array_equal(out, x)
    np.testing.assert_array_equal(mask, np.ones_like(x))


def _layer_norm(x, g, b, axes, eps):
    mean = x.mean(axis=axes, keepdims=True)
    var = x.var(axis=axes, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * g + b


@pytest.mark.parametrize("shape,run_shape", SHAPES)
def test_layer_norm_and_rms_norm(legalize_run, shape, run_shape):
    x = _x(run_shape)
    for axes in ([-1], [1, 2]):
        pshape = tuple(run_shape[a] for a in axes)
        g, b = _x(pshape, 6), _x(pshape, 7)
        sinfos = [R.TensorStructInfo(shape, "float32")] + [R.TensorStructInfo(pshape, "float32")] * 2
        out = legalize_run(lambda a, gg, bb: R.op.nn.layer_norm(a, gg, bb, axes, 1e-5), sinfos, [x, g, b],
                           "layer_norm")[0]
        np.testing.assert_allclose(out, _layer_norm(x, g, b, tuple(axes), 1e-5), rtol=1e-4, atol=1e-4)
        out = legalize_run(lambda a, w: R.op.nn.rms_norm(a, w, axes, 1e-6), sinfos[:2], [x, g], "rms_norm")[0]
        ref = x / np.sqrt((x * x).mean(axis=tuple(axes), keepdims=True) + 1e-6) * g
        np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("shape,run_shape", SHAPES)
def test_batch_norm_inference(legalize_run, shape, run_shape):
    x = _x(run_shape)
    g, b, m = _x((3,), 8), _x((3,), 9), _x((3,), 10)
    v = np.random.default_rng(11).uniform(0.5, 2, (3,)).astype("float32")
    sinfos = [R.TensorStructInfo(shape, "float32")] + [R.TensorStructInfo((3,), "float32")] * 4
    out, mean, var = legalize_run(lambda *a: R.op.nn.batch_norm(*a, axis=1, epsilon=1e-5, training=False),
                                  sinfos, [x, g, b, m, v], "batch_norm")
    c = (None, slice(None), None)
    ref = (x - m[c]) / np.sqrt(v[c] + 1e-5) * g[c] + b[c]
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(mean, m)
    np.testing.assert_array_equal(var, v)


@pytest.mark.parametrize("shape,run_shape", SHAPES)
def test_batch_norm_trains_by_default(legalize_run, shape, run_shape):
    # TVM's default: the batch's statistics normalize, and the moving ones are updated
    x = _x(run_shape)
    g, b, m = _x((3,), 8), _x((3,), 9), _x((3,), 10)
    v = np.random.default_rng(11).uniform(0.5, 2, (3,)).astype("float32")
    sinfos = [R.TensorStructInfo(shape, "float32")] + [R.TensorStructInfo((3,), "float32")] * 4
    out, mean, var = legalize_run(lambda *a: R.op.nn.batch_norm(*a, axis=1, momentum=0.25), sinfos,
                                  [x, g, b, m, v], "batch_norm")
    axes = tuple(i for i in range(x.ndim) if i != 1)
    bm, bv = x.mean(axis=axes), x.var(axis=axes)
    c = (None, slice(None)) + (None,) * (x.ndim - 2)
    ref = (x - bm[c]) / np.sqrt(bv[c] + 1e-5) * g[c] + b[c]
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(mean, 0.75 * m + 0.25 * bm, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(var, 0.75 * v + 0.25 * bv, rtol=1e-4, atol=1e-5)


def test_nn_struct_info_and_errors():
    x = R.Var("x", R.TensorStructInfo((N, 8), "float32"))
    g = R.Var("g", R.TensorStructInfo((8,), "float32"))
    bb = R.BlockBuilder()
    assert repr(bb.normalize(R.op.nn.rms_norm(x, g)).struct_info) == 'R.Tensor((n, 8), dtype="float32")'
    bn = bb.normalize(R.op.nn.batch_norm(x, g, g, g, g, axis=1)).struct_info
    assert repr(bn) == ('R.Tuple(R.Tensor((n, 8), dtype="float32"), R.Tensor((8,), dtype="float32"), '
                        'R.Tensor((8,), dtype="float32"))')
    i = R.Var("i", R.TensorStructInfo((2,), "int32"))
    assert repr(bb.normalize(R.op.nn.leaky_relu(i)).struct_info) == 'R.Tensor((2,), dtype="int32")'
    with pytest.raises(TypeInferenceError, match="'nn.gelu' requires data to have a float dtype"):
        bb.normalize(R.op.nn.gelu(i))
    with pytest.raises(TypeInferenceError, match="'nn.softmax' expects axis in \\[-2, 2\\)"):
        bb.normalize(R.op.nn.softmax(x, axis=2))
    with pytest.raises(TypeInferenceError, match="'nn.dropout' expects rate in \\[0, 1\\), got 1.5"):
        bb.normalize(R.op.nn.dropout(x, 1.5))
    s = R.Var("s", R.TensorStructInfo((2, 8), "float32"))
    with pytest.raises(TypeInferenceError, match="'nn.batch_norm' expects gamma to have shape \\(2,\\)"):
        bb.normalize(R.op.nn.batch_norm(s, g, g, g, g, axis=0))
    h = R.Var("h", R.TensorStructInfo((8,), "float16"))
    with pytest.raises(TypeInferenceError, match="'nn.rms_norm' expects weight to have data's dtype float32"):
        bb.normalize(R.op.nn.rms_norm(x, h))
