"""relax.builtin / relax.memory / relax.vm operators: struct info, purity, script round trip."""

import pytest

from graphc import relax, tir
from graphc.errors import TypeInferenceError
from graphc.ir import GlobalVar, structural_equal
from graphc.relax.op import builtin, memory, vm
from graphc.script import from_source

R = relax

SOURCE = '''
from graphc.script import ir as I, relax as R, tir as T

@I.ir_module
class Module:
    @T.prim_func
    def f(A: T.Buffer((2, 3), "float32"), B: T.Buffer((2, 3), "float32")):
        for i, j in T.grid(2, 3):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj]

    @R.function(pure=False)
    def main(x: R.Tensor((2, 3), "float32")) -> R.Tensor((2, 3), "float32"):
        cls = Module
        a = R.builtin.alloc_tensor(R.shape([2, 3]), R.dtype("float32"), R.prim_value(0), R.str("global"))
        s = R.memory.alloc_storage(R.shape([24]), R.prim_value(0), R.str("global"), R.dtype("float32"))
        t = R.memory.alloc_tensor(s, R.prim_value(0), R.shape([2, 3]), R.dtype("float32"))
        _ = cls.f(x, t)
        k = R.memory.kill_tensor(t)
        k2 = R.memory.kill_storage(s)
        s2 = R.vm.alloc_storage(R.shape([24]), R.prim_value(0), R.dtype("float32"), R.str("global"))
        t2 = R.vm.alloc_tensor(s2, R.prim_value(0), R.shape([2, 3]), R.dtype("float32"))
        _1 = R.vm.call_tir_dyn(cls.f, (x, t2))
        h = R.call_builtin_with_ctx(R.ExternFunc("vm.builtin.alloc_shape_heap"), (R.prim_value(2),),
                                    sinfo_args=R.Tensor(ndim=1, dtype="int64"))
        k3 = R.vm.kill_object(s2)
        return a
'''


def test_script_round_trip():
    mod = from_source(SOURCE)
    bindings = mod["main"].body.blocks[0].bindings
    names = [b.value.op.name for b in bindings if isinstance(b.value.op, R.Op)]
    assert names == ["relax.builtin.alloc_tensor", "relax.memory.alloc_storage", "relax.memory.alloc_tensor",
                     "relax.memory.kill_tensor", "relax.memory.kill_storage", "relax.vm.alloc_storage",
                     "relax.vm.alloc_tensor", "relax.vm.call_tir_dyn", "relax.call_builtin_with_ctx",
                     "relax.vm.kill_object"]
    text = mod.script()
    assert ('R.builtin.alloc_tensor(R.shape([2, 3]), R.dtype("float32"), R.prim_value(0), '
            'R.str("global"))') in text
    assert structural_equal(from_source(text), mod)
    sinfos = {b.var.name_hint: b.var.struct_info for b in bindings}
    assert str(sinfos["a"]) == 'R.Tensor((2, 3), dtype="float32")'
    assert str(sinfos["s"]) == "R.Object"
    assert str(sinfos["k"]) == "R.Tuple()"
    assert str(sinfos["h"]) == 'R.Tensor(dtype="int64", ndim=1)'


def test_purity():
    pure = ["relax.builtin.alloc_tensor", "relax.memory.alloc_storage", "relax.memory.alloc_tensor",
            "relax.vm.alloc_storage", "relax.vm.alloc_tensor"]
    impure = ["relax.memory.kill_storage", "relax.memory.kill_tensor", "relax.vm.kill_object",
              "relax.vm.call_tir_dyn", "relax.call_builtin_with_ctx"]
    assert all(R.Op.get(n).get_attr("FPurity") for n in pure)
    assert not any(R.Op.get(n).get_attr("FPurity") for n in impure)


def test_builders_and_symbolic_shapes():
    n = tir.Var("n", "int64")
    bb = R.BlockBuilder()
    a = bb.normalize(builtin.alloc_tensor((n, 4), "float16"))
    assert structural_equal(a.struct_info, R.TensorStructInfo((n, 4), "float16"))
    s = bb.normalize(memory.alloc_storage((n * 8,), 0, "global", "float16"))
    assert isinstance(s.struct_info, R.ObjectStructInfo)
    sv = R.Var("s", R.ObjectStructInfo())
    t = bb.normalize(vm.alloc_tensor(sv, 16, (n,), "int32"))
    assert structural_equal(t.struct_info, R.TensorStructInfo((n,), "int32"))
    shape_var = R.Var("sh", R.ShapeStructInfo(ndim=3))
    u = bb.normalize(builtin.alloc_tensor(shape_var, "float32"))
    assert u.struct_info.ndim == 3 and u.struct_info.shape_values is None
    c = bb.normalize(vm.call_builtin_with_ctx("vm.builtin.alloc_shape_heap", [R.PrimValue(3)],
                                              sinfo_args=[R.TensorStructInfo(ndim=1, dtype="int64")]))
    assert c.args[0].global_symbol == "vm.builtin.alloc_shape_heap"
    assert isinstance(bb.normalize(memory.kill_tensor(x_of(u))).struct_info, R.TupleStructInfo)


def x_of(expr):
    return R.Var("v", expr.struct_info)


def test_errors():
    bb = R.BlockBuilder()
    x = R.Var("x", R.TensorStructInfo((2,), "float32"))
    with pytest.raises(TypeInferenceError, match="'memory.alloc_storage' expects argument size"):
        bb.normalize(memory.alloc_storage(x, 0, "global", "float32"))
    with pytest.raises(TypeInferenceError, match="'builtin.alloc_tensor' expects argument dtype"):
        bb.normalize(R.Call(R.Op.get("relax.builtin.alloc_tensor"),
                            [R.ShapeExpr([2]), R.StringImm("float32"), R.PrimValue(0),
                             R.StringImm("global")]))
    with pytest.raises(TypeInferenceError, match="'vm.call_tir_dyn' expects argument func"):
        bb.normalize(vm.call_tir_dyn(x, [x]))
    assert bb.normalize(vm.call_tir_dyn(GlobalVar("f"), [x])).struct_info.fields == ()
