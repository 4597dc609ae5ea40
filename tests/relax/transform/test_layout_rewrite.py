"""AttachAttrLayoutFreeBuffers and SplitLayoutRewritePreproc: weights packed once, outside the
kernels, with results bit-identical to kernels that pack on every call."""

import numpy as np
import pytest

import graphc
from graphc import dlight, relax, te
from graphc.relax.transform import (
    AttachAttrLayoutFreeBuffers,
    BindParams,
    FoldConstant,
    InlinePermuteIntoConsumers,
    SplitLayoutRewritePreproc,
)
from graphc.script import from_source
from graphc.target import Target
from graphc.tir import PrimFunc

TUTORIAL = graphc.__path__[0] + "/../tests/data/ir_module_tutorial/from_torch.txt"
SHAPES = {"p_fc1_weight": (256, 784), "p_fc1_bias": (256,), "p_fc2_weight": (10, 256), "p_fc2_bias": (10,)}
RNG = np.random.default_rng(0)
WEIGHTS = {name: RNG.standard_normal(shape).astype("float32") for name, shape in SHAPES.items()}


def _tutorial(num_input: int = 1):
    mod = from_source(open(TUTORIAL).read())
    main = mod["main"]
    mod["main"] = main.replace(attrs={**main.attrs, "num_input": num_input})
    return mod


def _lowered(mod):
    return InlinePermuteIntoConsumers()(relax.get_pipeline("zero")(mod))


def _kernels(mod) -> dict:
    return {gv.name_hint: f for gv, f in mod.items() if isinstance(f, PrimFunc)}


def test_attach_marks_the_parameters_every_caller_passes_a_weight():
    mod = AttachAttrLayoutFreeBuffers()(_lowered(_tutorial()))
    kernels = _kernels(mod)
    assert kernels["fused_matmul_add_relu"].attrs["layout_free_buffers"] == [1, 2]  # weight, bias
    assert kernels["fused_matmul1_add1"].attrs["layout_free_buffers"] == [1, 2]
    # constants count as weights; inputs (everything, with num_input=5) do not
    bound = BindParams("main", WEIGHTS)(_tutorial())
    assert _kernels(AttachAttrLayoutFreeBuffers()(_lowered(bound)))["fused_matmul1_add1"].attrs[
        "layout_free_buffers"] == [1, 2]
    inputs = AttachAttrLayoutFreeBuffers()(_lowered(_tutorial(num_input=5)))
    assert all("layout_free_buffers" not in f.attrs for f in _kernels(inputs).values())


def test_attach_keeps_only_what_every_call_site_passes_as_a_weight():
    a, b = te.placeholder((8, 8), name="a"), te.placeholder((8, 8), name="b")
    r = te.reduce_axis((0, 8), "r")
    kernel = te.create_prim_func([a, b, te.compute((8, 8), lambda i, j: te.sum(a[i, r] * b[r, j], axis=r))])
    x = relax.Var("x", relax.TensorStructInfo((8, 8), "float32"))
    w = relax.Var("w", relax.TensorStructInfo((8, 8), "float32"))
    bb = relax.BlockBuilder()
    gv = bb.add_func(kernel.without_attr("global_symbol"), "mm")
    sinfo = relax.TensorStructInfo((8, 8), "float32")
    with bb.function("main", [x, w], attrs={"num_input": 1}):
        with bb.dataflow():
            y = bb.emit(relax.op.call_tir(gv, [x, w], sinfo))  # a weight as B
            z = bb.emit_output(relax.op.call_tir(gv, [y, y], sinfo))  # an activation as B
        bb.emit_func_output(z)
    mod = bb.get()
    out = AttachAttrLayoutFreeBuffers()(mod)
    assert "layout_free_buffers" not in out["mm"].attrs
    assert out is mod


def _scheduled_and_split(mod):
    mod = AttachAttrLayoutFreeBuffers()(_lowered(mod))
    with Target("llvm"):
        mod = dlight.default_schedule()(mod)
    return SplitLayoutRewritePreproc()(mod)


def test_split_moves_the_packing_out_of_the_kernel_and_fold_constant_runs_it_once():
    mod = _scheduled_and_split(BindParams("main", WEIGHTS)(_tutorial()))
    kernels = _kernels(mod)
    packs = [name for name in kernels if "_pack_" in name]
    assert len(packs) == 2
    kernel = kernels["fused_matmul_add_relu"]
    packed = kernel.buffer_map[kernel.params[1]]
    assert [int(d) for d in packed.shape] == [4, 784, 64]  # 256 columns in 4 panels of 64
    assert "meta_schedule.layout_rewrite_preproc" not in kernel.script()
    assert "R.call_tir(cls.fused_matmul_add_relu_pack_" in mod.script()
    assert relax.analysis.well_formed(mod)
    folded = FoldConstant()(mod)
    assert not any("_pack_" in name for name in _kernels(folded))
    assert "_pack_" not in folded["main"].script()


def test_prepacked_weights_give_bit_identical_results():
    x = RNG.standard_normal((1, 784)).astype("float32")
    args = [WEIGHTS[n] for n in SHAPES]
    # weights as constants: packed at compile time, outside the kernels
    folded = relax.VirtualMachine(graphc.compile(BindParams("main", WEIGHTS)(_tutorial())), graphc.cpu())
    # the same weights as plain inputs: every call packs them inside the kernels
    unpacked = relax.VirtualMachine(graphc.compile(_tutorial(num_input=5)), graphc.cpu())
    # weights kept as inputs: the packing kernel runs in main before each matmul
    kept = relax.VirtualMachine(graphc.compile(_tutorial(num_input=1)), graphc.cpu())
    # weights kept as inputs, the packing lifted into main_transform_params: run once
    lifted = relax.VirtualMachine(graphc.compile(_tutorial(num_input=1), lift_transform_params=True),
                                  graphc.cpu())
    packed = lifted["main_transform_params"](*args)
    assert [tuple(p.shape) for p in packed][0] == (4, 784, 64)
    want = unpacked["main"](x, *args).numpy()
    np.testing.assert_array_equal(folded["main"](x).numpy(), want)
    np.testing.assert_array_equal(kept["main"](x, *args).numpy(), want)
    np.testing.assert_array_equal(lifted["main"](x, *packed).numpy(), want)
    reference = np.maximum(x @ WEIGHTS["p_fc1_weight"].T + WEIGHTS["p_fc1_bias"], 0)
    reference = reference @ WEIGHTS["p_fc2_weight"].T + WEIGHTS["p_fc2_bias"]
    np.testing.assert_allclose(want, reference, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("name", ["AttachAttrLayoutFreeBuffers", "SplitLayoutRewritePreproc"])
def test_passes_change_nothing_without_work(name):
    mod = _lowered(_tutorial(num_input=5))
    assert getattr(relax.transform, name)()(mod) is mod
