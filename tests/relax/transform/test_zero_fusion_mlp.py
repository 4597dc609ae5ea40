"""The tutorial's MLP through the fusion passes of the zero pipeline.

LegalizeOps -> AnnotateTIROpPattern -> FuseOps -> FuseTIR gives the tutorial's
`fused_matmul_add_relu` and `fused_matmul1_add1` (with graphc's block and buffer names), and
every PrimFunc of the result, built with LLVM and chained by hand, computes the MLP.
"""
# ruff: noqa: E501

import numpy as np

import graphc
from graphc import relax, tir
from graphc.ir import assert_structural_equal, structural_equal
from graphc.script import from_source

PRELUDE = "from graphc.script import ir as I, tir as T, relax as R\n"

# The tutorial's model as `mod_from_torch.show()` prints it (TorchModel: fc1, relu, fc2).
MLP = PRELUDE + """
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, 784), dtype="float32"), p_fc1_weight: R.Tensor((256, 784), dtype="float32"), p_fc1_bias: R.Tensor((256,), dtype="float32"), p_fc2_weight: R.Tensor((10, 256), dtype="float32"), p_fc2_bias: R.Tensor((10,), dtype="float32")) -> R.Tensor((1, 10), dtype="float32"):
        R.func_attr({"num_input": 1})
        with R.dataflow():
            lv: R.Tensor((784, 256), dtype="float32") = R.permute_dims(p_fc1_weight, axes=None)
            lv1: R.Tensor((1, 256), dtype="float32") = R.matmul(x, lv, out_dtype="float32")
            lv2: R.Tensor((1, 256), dtype="float32") = R.add(lv1, p_fc1_bias)
            lv3: R.Tensor((1, 256), dtype="float32") = R.nn.relu(lv2)
            lv4: R.Tensor((256, 10), dtype="float32") = R.permute_dims(p_fc2_weight, axes=None)
            lv5: R.Tensor((1, 10), dtype="float32") = R.matmul(lv3, lv4, out_dtype="float32")
            lv6: R.Tensor((1, 10), dtype="float32") = R.add(lv5, p_fc2_bias)
            gv: R.Tensor((1, 10), dtype="float32") = lv6
            R.output(gv)
        return gv
"""

# What the tutorial shows after `relax.get_pipeline("zero")`, in graphc's names.
EXPECTED = PRELUDE + """
@I.ir_module
class Module:
    @T.prim_func(private=True)
    def fused_matmul1_add1(lv3: T.Buffer((T.int64(1), T.int64(256)), "float32"), lv4: T.Buffer((T.int64(256), T.int64(10)), "float32"), p_fc2_bias: T.Buffer((T.int64(10),), "float32"), T_add_intermediate: T.Buffer((T.int64(1), T.int64(10)), "float32")):
        T.func_attr({"tir.noalias": True})
        # with T.block("root"):
        matmul_intermediate = T.alloc_buffer((T.int64(1), T.int64(10)), "float32")
        for i0, i1, k in T.grid(T.int64(1), T.int64(10), T.int64(256)):
            with T.block("matmul"):
                v_i0, v_i1, v_k = T.axis.remap("SSR", [i0, i1, k])
                T.reads(lv3[v_i0, v_k], lv4[v_k, v_i1])
                T.writes(matmul_intermediate[v_i0, v_i1])
                with T.init():
                    matmul_intermediate[v_i0, v_i1] = T.float32(0.0)
                matmul_intermediate[v_i0, v_i1] = matmul_intermediate[v_i0, v_i1] + lv3[v_i0, v_k] * lv4[v_k, v_i1]
        for ax0, ax1 in T.grid(T.int64(1), T.int64(10)):
            with T.block("T_add"):
                v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
                T.reads(matmul_intermediate[v_ax0, v_ax1], p_fc2_bias[v_ax1])
                T.writes(T_add_intermediate[v_ax0, v_ax1])
                T_add_intermediate[v_ax0, v_ax1] = matmul_intermediate[v_ax0, v_ax1] + p_fc2_bias[v_ax1]

    @T.prim_func(private=True)
    def fused_matmul_add_relu(x: T.Buffer((T.int64(1), T.int64(784)), "float32"), lv: T.Buffer((T.int64(784), T.int64(256)), "float32"), p_fc1_bias: T.Buffer((T.int64(256),), "float32"), compute_intermediate: T.Buffer((T.int64(1), T.int64(256)), "float32")):
        T.func_attr({"tir.noalias": True})
        # with T.block("root"):
        matmul_intermediate = T.alloc_buffer((T.int64(1), T.int64(256)), "float32")
        T_add_intermediate = T.alloc_buffer((T.int64(1), T.int64(256)), "float32")
        for i0, i1, k in T.grid(T.int64(1), T.int64(256), T.int64(784)):
            with T.block("matmul"):
                v_i0, v_i1, v_k = T.axis.remap("SSR", [i0, i1, k])
                T.reads(x[v_i0, v_k], lv[v_k, v_i1])
                T.writes(matmul_intermediate[v_i0, v_i1])
                with T.init():
                    matmul_intermediate[v_i0, v_i1] = T.float32(0.0)
                matmul_intermediate[v_i0, v_i1] = matmul_intermediate[v_i0, v_i1] + x[v_i0, v_k] * lv[v_k, v_i1]
        for ax0, ax1 in T.grid(T.int64(1), T.int64(256)):
            with T.block("T_add"):
                v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
                T.reads(matmul_intermediate[v_ax0, v_ax1], p_fc1_bias[v_ax1])
                T.writes(T_add_intermediate[v_ax0, v_ax1])
                T_add_intermediate[v_ax0, v_ax1] = matmul_intermediate[v_ax0, v_ax1] + p_fc1_bias[v_ax1]
        for i0_1, i1_1 in T.grid(T.int64(1), T.int64(256)):
            with T.block("compute"):
                v_i0_1, v_i1_1 = T.axis.remap("SS", [i0_1, i1_1])
                T.reads(T_add_intermediate[v_i0_1, v_i1_1])
                T.writes(compute_intermediate[v_i0_1, v_i1_1])
                compute_intermediate[v_i0_1, v_i1_1] = T.max(T_add_intermediate[v_i0_1, v_i1_1], T.float32(0.0))

    @T.prim_func(private=True)
    def transpose(p_fc1_weight: T.Buffer((T.int64(256), T.int64(784)), "float32"), T_transpose: T.Buffer((T.int64(784), T.int64(256)), "float32")):
        T.func_attr({"op_pattern": 2, "tir.noalias": True})
        # with T.block("root"):
        for ax0, ax1 in T.grid(T.int64(784), T.int64(256)):
            with T.block("T_transpose"):
                v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
                T.reads(p_fc1_weight[v_ax1, v_ax0])
                T.writes(T_transpose[v_ax0, v_ax1])
                T_transpose[v_ax0, v_ax1] = p_fc1_weight[v_ax1, v_ax0]

    @T.prim_func(private=True)
    def transpose1(p_fc2_weight: T.Buffer((T.int64(10), T.int64(256)), "float32"), T_transpose: T.Buffer((T.int64(256), T.int64(10)), "float32")):
        T.func_attr({"op_pattern": 2, "tir.noalias": True})
        # with T.block("root"):
        for ax0, ax1 in T.grid(T.int64(256), T.int64(10)):
            with T.block("T_transpose"):
                v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
                T.reads(p_fc2_weight[v_ax1, v_ax0])
                T.writes(T_transpose[v_ax0, v_ax1])
                T_transpose[v_ax0, v_ax1] = p_fc2_weight[v_ax1, v_ax0]

    @R.function
    def main(x: R.Tensor((1, 784), dtype="float32"), p_fc1_weight: R.Tensor((256, 784), dtype="float32"), p_fc1_bias: R.Tensor((256,), dtype="float32"), p_fc2_weight: R.Tensor((10, 256), dtype="float32"), p_fc2_bias: R.Tensor((10,), dtype="float32")) -> R.Tensor((1, 10), dtype="float32"):
        R.func_attr({"num_input": 1})
        cls = Module
        with R.dataflow():
            lv = R.call_tir(cls.transpose, (p_fc1_weight,), out_sinfo=R.Tensor((784, 256), dtype="float32"))
            lv_1 = R.call_tir(cls.fused_matmul_add_relu, (x, lv, p_fc1_bias), out_sinfo=R.Tensor((1, 256), dtype="float32"))
            lv4 = R.call_tir(cls.transpose1, (p_fc2_weight,), out_sinfo=R.Tensor((256, 10), dtype="float32"))
            gv = R.call_tir(cls.fused_matmul1_add1, (lv_1, lv4, p_fc2_bias), out_sinfo=R.Tensor((1, 10), dtype="float32"))
            R.output(gv)
        return gv
"""

FUSION_PASSES = ["LegalizeOps", "AnnotateTIROpPattern", "FuseOps", "FuseTIR"]


def run_passes(mod, names=FUSION_PASSES):
    for name in names:
        mod = getattr(relax.transform, name)()(mod)
        assert relax.analysis.well_formed(mod), f"ill-formed after {name}"
        for _, func in mod.items():
            if isinstance(func, tir.PrimFunc):
                tir.analysis.verify_well_formed(func)
    return mod


def run_by_hand(mod, arrays):
    """Run main's call_tir bindings one by one, each PrimFunc built with LLVM separately."""
    main = mod["main"]
    values = dict(zip(main.params, arrays))
    for block in main.body.blocks:
        for binding in block.bindings:
            value = binding.value
            if isinstance(value, relax.Var):
                values[binding.var] = values[value]
                continue
            assert value.op.name == "relax.call_tir", value
            args = [values[a] for a in value.args[1].fields]
            sinfo = value.sinfo_args[0]
            out = np.zeros(tuple(int(d) for d in sinfo.shape_values), sinfo.dtype)
            graphc.build(mod[value.args[0].name_hint], target="llvm")(*args, out)
            values[binding.var] = out
    return values[main.body.body]


def weights():
    rng = np.random.default_rng(0)
    shapes = [(1, 784), (256, 784), (256,), (10, 256), (10,)]
    return [rng.normal(size=s).astype("float32") * 0.1 for s in shapes]


def reference(x, w1, b1, w2, b2):
    return np.maximum(x @ w1.T + b1, 0) @ w2.T + b2


def test_fused_module_matches_the_tutorial():
    after = run_passes(from_source(MLP))
    assert [gv.name_hint for gv in after.get_global_vars()] == [
        "fused_matmul1_add1", "fused_matmul_add_relu", "main", "transpose", "transpose1"]
    assert_structural_equal(after, from_source(EXPECTED))


def _block_names(func):
    names = []
    tir.functor.post_order_visit(func.body, lambda n: names.append(n.name_hint) if isinstance(n, tir.Block) else None)
    return names


def test_fused_names_match_the_tutorial():
    after = run_passes(from_source(MLP))
    fused = after["fused_matmul_add_relu"]
    assert [b.name for b in fused.buffers] == ["x", "lv", "p_fc1_bias", "compute_intermediate"]
    assert [b.name for b in fused.body.block.alloc_buffers] == ["matmul_intermediate", "T_add_intermediate"]
    assert _block_names(fused) == ["matmul", "T_add", "compute", "root"]
    assert fused.attrs == {"tir.noalias": True}
    assert after["transpose"].attrs == {"op_pattern": 2, "tir.noalias": True}
    calls = [b.value.args[0].name_hint for b in after["main"].body.blocks[0].bindings if isinstance(b.value, relax.Call)]
    assert calls == ["transpose", "fused_matmul_add_relu", "transpose1", "fused_matmul1_add1"]


def test_fused_prim_funcs_compute_the_mlp():
    arrays = weights()
    legal = run_passes(from_source(MLP), ["LegalizeOps"])
    fused = run_passes(from_source(MLP))
    unfused_out = run_by_hand(legal, arrays)
    fused_out = run_by_hand(fused, arrays)
    np.testing.assert_allclose(fused_out, unfused_out, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(fused_out, reference(*arrays), rtol=1e-4, atol=1e-4)


def test_running_the_passes_twice_is_harmless():
    once = run_passes(from_source(MLP))
    twice = run_passes(once)
    # The second AnnotateTIROpPattern annotates the fused PrimFuncs; nothing fuses further.
    assert twice["fused_matmul_add_relu"].attrs["op_pattern"] == 4
    assert structural_equal(twice["main"], once["main"])
    for name in ("fused_matmul_add_relu", "fused_matmul1_add1"):
        assert structural_equal(twice[name].without_attr("op_pattern"), once[name])
    np.testing.assert_allclose(run_by_hand(twice, weights()), run_by_hand(once, weights()), rtol=1e-6)


def test_zero_pipeline_fuses_the_mlp():
    after = relax.get_pipeline("zero")(from_source(MLP))
    assert {"fused_matmul_add_relu", "fused_matmul1_add1"} <= {gv.name_hint for gv in after.get_global_vars()}
    np.testing.assert_allclose(run_by_hand(after, weights()), reference(*weights()), rtol=1e-4, atol=1e-4)
