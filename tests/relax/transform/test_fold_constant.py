"""FoldConstant: call_tir and operator calls on constants become constants (Before/Expected)."""

import numpy as np
import pytest

import graphc
from graphc import relax
from graphc.ir import IRModule
from graphc.ir.structural import assert_structural_equal
from graphc.ir.transform import PassContext
from graphc.script import ir as I
from graphc.script import relax as R
from graphc.script import tir as T


def gen_mod(mod, name, binding):
    """The module holding only function `name` (and the PrimFuncs), parameters bound by name."""
    funcs = {gv.name_hint: f for gv, f in mod.items()
             if not isinstance(f, relax.Function) or gv.name_hint == name}
    out = IRModule({("main" if k == name else k): v for k, v in funcs.items()})
    out["main"] = out["main"].with_attr("global_symbol", "main")
    return relax.transform.BindParams("main", binding)(out)


def fold(mod, **config):
    with PassContext(config=config):
        after = relax.transform.FoldConstant()(mod)
    assert relax.analysis.well_formed(after)
    again = relax.transform.FoldConstant()(after)
    assert all(again[gv] is after[gv] for gv in after.get_global_vars()), "not idempotent"
    return after


@I.ir_module
class AddOne:
    @T.prim_func(private=True)
    def addone(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32")):
        for i, j in T.grid(16, 16):
            with T.block("addone"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] + T.float32(1)

    @T.prim_func(private=True)
    def func_add(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"),
                 C: T.Buffer((16, 16), "float32")):
        for i, j in T.grid(16, 16):
            with T.block("add"):
                vi, vj = T.axis.remap("SS", [i, j])
                C[vi, vj] = A[vi, vj] + B[vi, vj]

    @R.function
    def before(c0: R.Tensor((16, 16), "float32")):
        cls = AddOne
        lv0 = R.call_tir(cls.addone, (c0,), R.Tensor((16, 16), dtype="float32"))
        return lv0

    @R.function
    def expected(c1: R.Tensor((16, 16), "float32")):
        return c1

    @R.function
    def before_chain(x: R.Tensor((16, 16), "float32"), c0: R.Tensor((16, 16), "float32")):
        cls = AddOne
        with R.dataflow():
            lv0 = R.call_tir(cls.addone, (c0,), R.Tensor((16, 16), dtype="float32"))
            lv1 = R.call_tir(cls.addone, (lv0,), R.Tensor((16, 16), dtype="float32"))
            gv = R.call_tir(cls.func_add, (x, lv1), R.Tensor((16, 16), dtype="float32"))
            R.output(gv)
        return gv

    @R.function
    def expected_chain(x: R.Tensor((16, 16), "float32"), c2: R.Tensor((16, 16), "float32")):
        cls = AddOne
        with R.dataflow():
            gv = R.call_tir(cls.func_add, (x, c2), R.Tensor((16, 16), dtype="float32"))
            R.output(gv)
        return gv


C0 = np.arange(256, dtype="float32").reshape(16, 16)


def test_call_tir_on_a_constant_folds_and_the_prim_func_goes():
    before = gen_mod(AddOne, "before", {"c0": C0})
    after = fold(before)
    expected = gen_mod(AddOne, "expected", {"c1": C0 + 1})
    assert_structural_equal(after["main"], expected["main"])
    # addone was used only there
    assert [gv.name_hint for gv in after.get_global_vars()] == ["func_add", "main"]


def test_chain_folds_up_to_the_first_non_constant_input():
    before = gen_mod(AddOne, "before_chain", {"c0": C0})
    after = fold(before)
    expected = gen_mod(AddOne, "expected_chain", {"c2": C0 + 2})
    assert_structural_equal(after["main"], expected["main"])
    assert "addone" not in after and "func_add" in after


def test_nothing_to_fold_returns_the_same_functions():
    mod = gen_mod(AddOne, "before_chain", {})
    after = relax.transform.FoldConstant()(mod)
    assert after["main"] is mod["main"] and after["addone"] is mod["addone"]


def test_one_kernel_per_structurally_equal_prim_func():
    from graphc.ir.instrument import PassInstrument
    from graphc.ir.transform import add_global_instrument, remove_global_instrument

    class CountLowerings(PassInstrument):
        def __init__(self):
            self.count = 0

        def run_before_pass(self, mod, info):
            self.count += info.name == "tir.lower"

    counter = CountLowerings()
    add_global_instrument(counter)
    try:
        fold(gen_mod(AddOne, "before_chain", {"c0": C0}))
    finally:
        remove_global_instrument(counter)
    assert counter.count == 1  # addone, built once for the two calls


@I.ir_module
class HighLevel:
    @R.function
    def main(c: R.Tensor((2, 3), "float32"), x: R.Tensor((2, 3), "float32")):
        with R.dataflow():
            lv0 = R.add(c, c)
            lv1 = R.multiply(lv0, c)
            gv = R.add(lv1, x)
            R.output(gv)
        return gv

    @R.function
    def outside(c: R.Tensor((2, 3), "float32")):
        lv0 = R.add(c, c)
        return lv0


def test_operator_calls_on_constants_fold_in_dataflow_blocks():
    c = np.arange(6, dtype="float32").reshape(2, 3)
    after = fold(relax.transform.BindParams("main", {"c": c})(HighLevel))
    (binding,) = after["main"].body.blocks[0].bindings
    folded = binding.value.args[0]
    assert isinstance(folded, relax.Constant)
    np.testing.assert_allclose(folded.data.numpy(), (c + c) * c)
    assert set(gv.name_hint for gv in after.get_global_vars()) == {"main", "outside"}  # nothing left behind


def test_operator_calls_outside_dataflow_blocks_stay():
    mod = HighLevel.copy()
    mod["outside"] = mod["outside"].with_attr("global_symbol", "outside")
    mod = relax.transform.BindParams("outside", {"c": np.ones((2, 3), "float32")})(mod)
    after = fold(mod)
    assert after["outside"] is mod["outside"]  # TVM folds operators only inside dataflow blocks


@I.ir_module
class Big:
    @R.function
    def main(c: R.Tensor((4,), "float32")):
        with R.dataflow():
            gv = R.broadcast_to(c, R.shape([512, 256, 4]))
            R.output(gv)
        return gv


def test_large_outputs_that_grow_the_model_are_not_folded():
    mod = relax.transform.BindParams("main", {"c": np.arange(4, dtype="float32")})(Big)
    after = fold(mod)  # 2 MiB out of 16 bytes: above the 1 MiB default
    assert after["main"] is mod["main"]
    after = fold(mod, **{"relax.FoldConstant.max_output_bytes": 4 << 20})
    out = after["main"].body.body
    assert isinstance(out, relax.Constant) and out.data.shape == (512, 256, 4)
    small = relax.transform.FoldConstant(max_output_bytes=16)(relax.transform.LegalizeOps()(mod))
    assert "broadcast_to" in small  # the pass option wins over the default


@I.ir_module
class Shapes:
    @R.function
    def main(x: R.Tensor((16,), "float32")):
        with R.dataflow():
            lv = R.shape([4, 4])
            gv = R.reshape(x, lv)
            R.output(gv)
        return gv


@I.ir_module
class ShapesExpected:
    @R.function
    def main(x: R.Tensor((16,), "float32")):
        with R.dataflow():
            gv = R.reshape(x, R.shape([4, 4]))
            R.output(gv)
        return gv


def test_shape_vars_are_inlined_into_operator_calls():
    assert_structural_equal(fold(Shapes)["main"], ShapesExpected["main"])


def test_tuple_outputs_and_legalized_models_fold_numerically():
    c = np.arange(12, dtype="float32").reshape(4, 3)
    x = relax.Var("x", relax.TensorStructInfo((2, 3), "float32"))
    bb = relax.BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            parts = bb.emit(relax.op.split(relax.const(c), 2, axis=0))
            first = bb.emit(relax.TupleGetItem(parts, 1))
            w = bb.emit(relax.op.permute_dims(relax.const(c)))
            gv = bb.emit_output(relax.op.matmul(relax.op.add(x, first), w))
        bb.emit_func_output(gv)
    legalized = relax.transform.LegalizeOps()(bb.get())
    after = fold(legalized)
    calls = [b.value for b in after["main"].body.blocks[0].bindings]
    assert len(calls) == 2  # add (x is not constant) and matmul; split, its item and transpose folded
    assert "split" not in after and "transpose" not in after
    add, matmul = calls
    assert all(isinstance(c.args[1].fields[1], relax.Constant) for c in calls)
    x_np = np.ones((2, 3), "float32")
    t = np.zeros((2, 3), "float32")
    graphc.build(after[add.args[0]], target="llvm")["main"](x_np, add.args[1].fields[1].data.numpy(), t)
    out = np.zeros((2, 4), "float32")
    graphc.build(after[matmul.args[0]], target="llvm")["main"](t, matmul.args[1].fields[1].data.numpy(), out)
    np.testing.assert_allclose(out, (x_np + c[2:]) @ c.T, rtol=1e-5)


@I.ir_module
class Scalars:
    @R.function
    def main(x: R.Tensor((), "float32")):
        with R.dataflow():
            lv = R.multiply(R.const(2.0, "float32"), R.const(3.0, "float32"))
            gv = R.add(x, lv)
            R.output(gv)
        return gv


@I.ir_module
class ScalarsExpected:
    @R.function
    def main(x: R.Tensor((), "float32")):
        with R.dataflow():
            gv = R.add(x, R.const(6.0, "float32"))
            R.output(gv)
        return gv


def test_scalar_constants_fold():
    assert_structural_equal(fold(Scalars), ScalarsExpected)


@pytest.mark.parametrize("opt_level", [0, 3])
def test_runs_at_every_opt_level(opt_level):
    with PassContext(opt_level=opt_level):
        after = relax.transform.FoldConstant()(gen_mod(AddOne, "before", {"c0": C0}))
    np.testing.assert_allclose(after["main"].body.body.data.numpy(), C0 + 1)


@pytest.mark.parametrize("shape, axes, dtype", [
    ((3, 5), (1, 0), "float32"), ((2, 3, 4), (2, 0, 1), "float16"), ((2, 3, 4, 5), (0, 2, 3, 1), "int8"),
    ((7,), (0,), "float32"), ((1, 4, 1), (2, 1, 0), "bfloat16")])
def test_a_transpose_folds_through_numpy_bit_for_bit(monkeypatch, shape, axes, dtype):
    """A transposed constant (a weight `W.T`) is folded by numpy's copy, not by building and running
    the transpose kernel: the same bits as the kernel's, any dtype."""
    from graphc.ir.dtype import DataType
    from graphc.relax.transform import fold_constant

    data = (np.random.default_rng(0).standard_normal(shape) * 50).astype(DataType(dtype).numpy_dtype())
    bb = relax.BlockBuilder()
    with bb.function("main", []):
        with bb.dataflow():
            gv = bb.emit_output(relax.op.permute_dims(relax.const(data), list(axes)))
        bb.emit_func_output(gv)
    mod = relax.transform.LegalizeOps()(bb.get())
    taken = []
    original = fold_constant._permutation
    monkeypatch.setattr(fold_constant, "_permutation", lambda f: taken.append(original(f)) or taken[-1])
    by_numpy = relax.transform.FoldConstant()(mod)["main"].body.body.data.numpy()
    assert taken == [axes]
    monkeypatch.setattr(fold_constant, "_permutation", lambda f: None)
    by_kernel = relax.transform.FoldConstant()(mod)["main"].body.body.data.numpy()
    assert by_numpy.dtype == by_kernel.dtype and by_numpy.shape == np.transpose(data, axes).shape
    want = np.ascontiguousarray(np.transpose(data, axes)).tobytes()
    assert by_numpy.tobytes() == by_kernel.tobytes() == want


def test_only_plain_transposes_take_the_numpy_path():
    from graphc import te
    from graphc.relax.transform.fold_constant import _permutation

    A = te.placeholder((3, 4), name="A")
    assert _permutation(te.create_prim_func([A, te.compute((4, 3), lambda i, j: A[j, i])])) == (1, 0)
    assert _permutation(te.create_prim_func([A, te.compute((4, 3), lambda i, j: A[j, i] * 2.0)])) is None
    assert _permutation(te.create_prim_func([A, te.compute((3, 4), lambda i, j: A[i, 0])])) is None
    assert _permutation(te.create_prim_func([A, te.compute((4, 4), lambda i, j: A[j % 3, i])])) is None
    B = te.placeholder((4,), name="B")
    assert _permutation(te.create_prim_func([B, te.compute((4, 4), lambda i, j: B[j])])) is None
    cast = te.compute((3, 4), lambda i, j: A[i, j].astype("float16"))
    assert _permutation(te.create_prim_func([A, cast])) is None
