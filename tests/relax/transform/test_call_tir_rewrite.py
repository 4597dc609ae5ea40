"""CallTIRRewrite: explicit output allocation for call_tir (single, tuple, symbolic, tir_vars)."""
# ruff: noqa: E501 - golden IR text keeps its natural line length

import pytest

from graphc import relax
from graphc.errors import TypeInferenceError
from graphc.ir import assert_structural_equal
from graphc.script import from_source

R = relax

PRIM_FUNCS = '''
    @T.prim_func
    def exp(a: T.handle, b: T.handle):
        n = T.int64()
        A = T.match_buffer(a, (n, 4), "float32")
        B = T.match_buffer(b, (n, 4), "float32")
        for i, j in T.grid(n, 4):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = T.exp(A[vi, vj])

    @T.prim_func
    def split2(a: T.handle, b: T.handle, c: T.handle):
        n = T.int64()
        A = T.match_buffer(a, (n, 4), "float32")
        B = T.match_buffer(b, (n, 2), "float32")
        C = T.match_buffer(c, (n, 2), "float32")
        for i, j in T.grid(n, 2):
            with T.block("BC"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj]
                C[vi, vj] = A[vi, vj + 2]

    @T.prim_func
    def scale(a: T.handle, b: T.handle, k: T.int64):
        n = T.int64()
        A = T.match_buffer(a, (n, 4), "float32")
        B = T.match_buffer(b, (n, 4), "float32")
        for i, j in T.grid(n, 4):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] * T.Cast("float32", k)
'''

BEFORE = '''
from graphc.script import ir as I, relax as R, tir as T

@I.ir_module
class Module:
''' + PRIM_FUNCS + '''
    @R.function
    def main(x: R.Tensor(("n", 4), "float32")) -> R.Tuple(R.Tensor(("n", 2), "float32"), R.Tensor(("n", 4), "float32")):
        n = T.int64()
        cls = Module
        with R.dataflow():
            lv = R.call_tir(cls.exp, (x,), out_sinfo=R.Tensor((n, 4), "float32"))
            lv1 = R.call_tir(cls.split2, (lv,), out_sinfo=[R.Tensor((n, 2), "float32"), R.Tensor((n, 2), "float32")])
            lv2 = lv1[0]
            lv3 = R.call_tir(cls.scale, (x,), out_sinfo=R.Tensor((n, 4), "float32"), tir_vars=R.shape([n]))
            gv = (lv2, lv3)
            R.output(gv)
        return gv
'''

EXPECTED = '''
from graphc.script import ir as I, relax as R, tir as T

@I.ir_module
class Module:
''' + PRIM_FUNCS + '''
    @R.function
    def main(x: R.Tensor(("n", 4), "float32")) -> R.Tuple(R.Tensor(("n", 2), "float32"), R.Tensor(("n", 4), "float32")):
        n = T.int64()
        cls = Module
        with R.dataflow():
            alloc = R.builtin.alloc_tensor(R.shape([n, 4]), R.dtype("float32"), R.prim_value(0), R.str("global"))
            _ = cls.exp(x, alloc)
            lv = alloc
            alloc1 = R.builtin.alloc_tensor(R.shape([n, 2]), R.dtype("float32"), R.prim_value(0), R.str("global"))
            alloc2 = R.builtin.alloc_tensor(R.shape([n, 2]), R.dtype("float32"), R.prim_value(0), R.str("global"))
            _1 = cls.split2(lv, alloc1, alloc2)
            lv1 = (alloc1, alloc2)
            lv2 = lv1[0]
            alloc3 = R.builtin.alloc_tensor(R.shape([n, 4]), R.dtype("float32"), R.prim_value(0), R.str("global"))
            _2 = R.vm.call_tir_dyn(cls.scale, (x, alloc3, R.shape([n])))
            lv3 = alloc3
            gv = (lv2, lv3)
            R.output(gv)
        return gv
'''


def test_call_tir_rewrite():
    after = R.transform.CallTIRRewrite()(from_source(BEFORE))
    assert_structural_equal(after, from_source(EXPECTED))
    assert R.analysis.well_formed(after)


def test_idempotent_and_printable():
    after = R.transform.CallTIRRewrite()(from_source(BEFORE))
    assert R.transform.CallTIRRewrite()(after)["main"] is after["main"]
    assert "R.call_tir" not in after.script()
    assert_structural_equal(from_source(after.script()), after)


def test_after_legalize_ops():
    x = R.Var("x", R.TensorStructInfo((2, 3), "float32"))
    bb = R.BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            gv = bb.emit_output(R.op.nn.relu(R.op.add(x, x)))
        bb.emit_func_output(gv)
    mod = R.transform.CallTIRRewrite()(R.transform.LegalizeOps()(bb.get()))
    ops = [getattr(b.value, "op", None) for b in mod["main"].body.blocks[0].bindings]
    assert ops[0] is R.Op.get("relax.builtin.alloc_tensor")
    assert [getattr(op, "name_hint", None) for op in ops] == [None, "add", None, None, "relu", None]


def test_unknown_output_shape_is_an_error():
    mod = from_source('''
from graphc.script import ir as I, relax as R, tir as T

@I.ir_module
class Module:
    @T.prim_func
    def f(a: T.handle, b: T.handle):
        T.evaluate(0)

    @R.function
    def main(x: R.Tensor("float32", ndim=2)) -> R.Tensor("float32", ndim=2):
        cls = Module
        lv = R.call_tir(cls.f, (x,), out_sinfo=R.Tensor("float32", ndim=2))
        return lv
''')
    with pytest.raises(TypeInferenceError, match="known shapes"):
        R.transform.CallTIRRewrite()(mod)
