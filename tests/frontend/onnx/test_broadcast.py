"""Broadcasts the sizes do not decide at import (two different symbolic sizes, either of which
may be 1 when the model runs): one compiled model serves every size, against numpy."""

import numpy as np
from onnx import helper
from onnx_testing import make_model, rand

import graphc
from graphc import relax
from graphc.frontend.onnx import from_onnx


def _compile(model):
    mod = from_onnx(model)
    assert relax.analysis.well_formed(mod)
    return relax.VirtualMachine(graphc.compile(mod, "llvm"), graphc.cpu())


def test_add_of_two_symbolic_sizes_either_of_which_is_one():
    node = helper.make_node("Add", ["a", "b"], ["c"])
    vm = _compile(make_model([node], [("a", None, ["n", 3]), ("b", None, ["m", 1])], [("c", None, None)]))
    for n, m in [(4, 4), (1, 5), (6, 1)]:
        a, b = rand(n, 3), rand(m, 1, seed=1)
        np.testing.assert_allclose(vm["main"](a, b).numpy(), a + b, rtol=1e-6)


def test_matmul_with_different_symbolic_contraction_and_batch_sizes():
    node = helper.make_node("MatMul", ["a", "b"], ["c"])
    model = make_model([node], [("a", None, ["p", 2, "k"]), ("b", None, ["q", "j", 3])], [("c", None, None)])
    vm = _compile(model)
    for p, q, k in [(2, 2, 4), (1, 3, 5), (3, 1, 2)]:
        a, b = rand(p, 2, k), rand(q, k, 3, seed=1)
        np.testing.assert_allclose(vm["main"](a, b).numpy(), a @ b, rtol=1e-5)


def test_shape_equal_where_chain_folds_to_the_symbolic_sizes():
    """`Shape -> Equal(-1) -> Where(-1 -> 1) -> Expand`, what the exporter writes for `expand`:
    sizes are never -1, so the chain folds to (n, m) and the result keeps the input's sizes."""
    from onnx import TensorProto, numpy_helper

    minus, ones = (numpy_helper.from_array(np.array(v, dtype=np.int64), name)
                   for v, name in (([-1, -1], "minus"), ([1, 1], "ones")))
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Equal", ["s", "minus"], ["eq"]),
        helper.make_node("Where", ["eq", "ones", "s"], ["target"]),
        helper.make_node("Expand", ["b", "target"], ["y"]),
    ]
    model = make_model(nodes, [("x", None, ["n", "m"]), ("b", None, [1, "m"])],
                       [("y", None, None), ("target", TensorProto.INT64, [2])], initializers=[minus, ones])
    mod = from_onnx(model)
    text = mod.script()
    assert "R.Tensor((n, m)" in text and "Select" not in text and "R.equal" not in text
    vm = relax.VirtualMachine(graphc.compile(mod, "llvm"), graphc.cpu())
    for n, m in [(3, 4), (1, 1), (2, 5)]:
        x, b = rand(n, m), rand(1, m, seed=1)
        y, target = vm["main"](x, b)
        np.testing.assert_allclose(y.numpy(), np.broadcast_to(b, (n, m)))
        assert target.numpy().dtype == np.int64 and list(target.numpy()) == [n, m]
