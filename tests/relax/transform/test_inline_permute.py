"""InlinePermuteIntoConsumers: transposed copies feeding kernels are read in place."""

# ruff: noqa: E501 - script text

import numpy as np

import graphc
from graphc import relax
from graphc.script import from_source

PASS = relax.transform.InlinePermuteIntoConsumers


def _tutorial_zero():
    text = (graphc.__path__[0] + "/../tests/data/ir_module_tutorial/from_torch.txt")
    return relax.get_pipeline("zero")(from_source(open(text).read()))


def test_tutorial_mlp_reads_weights_in_place():
    mod = _tutorial_zero()
    after = PASS()(mod)
    names = sorted(gv.name_hint for gv in after.get_global_vars())
    assert names == ["fused_matmul1_add1", "fused_matmul_add_relu", "main"]
    text = after.script()
    assert "R.call_tir(cls.fused_matmul_add_relu, (x, p_fc1_weight, p_fc1_bias)" in text
    assert "p_fc1_weight: T.Buffer((T.int64(256), T.int64(784))" in text
    assert "x[v_i0, v_k] * p_fc1_weight[v_i1, v_k]" in text
    assert "T.reads(x[v_i0, v_k], p_fc1_weight[v_i1, v_k])" in text
    assert relax.analysis.well_formed(after)
    assert PASS()(after) is after  # nothing left to do: the same module


def test_results_do_not_change():
    mod = _tutorial_zero()
    rng = np.random.default_rng(0)
    shapes = ((1, 784), (256, 784), (256,), (10, 256), (10,))
    args = [rng.standard_normal(s).astype("float32") for s in shapes]

    def run(m):
        exe = relax.build(m, "llvm")
        return relax.VirtualMachine(exe, graphc.cpu())["main"](*args).numpy()

    np.testing.assert_allclose(run(PASS()(mod)), run(mod), rtol=1e-5, atol=1e-6)


BEFORE = '''
# from graphc.script import ir as I
# from graphc.script import tir as T
# from graphc.script import relax as R

@I.ir_module
class Module:
    @T.prim_func(private=True)
    def transpose(w: T.Buffer((T.int64(3), T.int64(2)), "float32"), t: T.Buffer((T.int64(2), T.int64(3)), "float32")):
        T.func_attr({"op_pattern": 2, "tir.noalias": True})
        for ax0, ax1 in T.grid(T.int64(2), T.int64(3)):
            with T.block("T_transpose"):
                v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
                T.reads(w[v_ax1, v_ax0])
                T.writes(t[v_ax0, v_ax1])
                t[v_ax0, v_ax1] = w[v_ax1, v_ax0]

    @T.prim_func(private=True)
    def exp(a: T.Buffer((T.int64(2), T.int64(3)), "float32"), b: T.Buffer((T.int64(2), T.int64(3)), "float32")):
        T.func_attr({"op_pattern": 0, "tir.noalias": True})
        for i0, i1 in T.grid(T.int64(2), T.int64(3)):
            with T.block("compute"):
                v_i0, v_i1 = T.axis.remap("SS", [i0, i1])
                T.reads(a[v_i0, v_i1])
                T.writes(b[v_i0, v_i1])
                b[v_i0, v_i1] = T.exp(a[v_i0, v_i1])

    @R.function
    def main(w: R.Tensor((3, 2), dtype="float32")):
        cls = Module
        with R.dataflow():
            t = R.call_tir(cls.transpose, (w,), out_sinfo=R.Tensor((2, 3), dtype="float32"))
            a = R.call_tir(cls.exp, (t,), out_sinfo=R.Tensor((2, 3), dtype="float32"))
            b = R.call_tir(cls.exp, (t,), out_sinfo=R.Tensor((2, 3), dtype="float32"))
            gv = (a, b)
            R.output(gv)
        return gv
'''


def test_every_consumer_reads_the_source_and_shared_callees_get_variants():
    after = PASS()(from_source(BEFORE))
    text = after.script()
    assert "transpose" not in text
    assert "R.call_tir(cls.exp1, (w,)" in text and "R.call_tir(cls.exp2, (w,)" in text
    assert "b[v_i0, v_i1] = T.exp(w[v_i1, v_i0])" in text
    w = np.arange(6, dtype="float32").reshape(3, 2)
    a, b = relax.VirtualMachine(relax.build(after, "llvm"), graphc.cpu())["main"](w)
    np.testing.assert_allclose(a.numpy(), np.exp(w.T), rtol=1e-6)
    np.testing.assert_allclose(b.numpy(), np.exp(w.T), rtol=1e-6)


def test_a_copy_used_otherwise_is_kept():
    text = BEFORE.replace("gv = (a, b)", "gv = (a, t)")
    mod = from_source(text)
    after = PASS()(mod)
    assert "R.call_tir(cls.transpose, (w,)" in after.script()
