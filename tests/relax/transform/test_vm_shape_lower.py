"""VMShapeLower: parameter checks, shape heap matching, shape_func, make_shape, match_cast."""
# ruff: noqa: E501 - golden IR text keeps its natural line length

import numpy as np
import pytest

import graphc
from graphc import relax, tir
from graphc.errors import TypeInferenceError
from graphc.ir import IRModule, assert_structural_equal
from graphc.relax.transform import MakeShapeCode, MatchShapeCode
from graphc.script import from_source

R = relax

STATIC = '''
from graphc.script import ir as I, relax as R, tir as T

@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3), "float32")) -> R.Tensor((2, 3), "float32"):
        return x
'''

STATIC_EXPECTED = '''
from graphc.script import ir as I, relax as R, tir as T

@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3), "float32")) -> R.Tensor((2, 3), "float32"):
        shape_heap = R.call_builtin_with_ctx(R.ExternFunc("vm.builtin.alloc_shape_heap"), (R.prim_value(0),), sinfo_args=R.Tensor(ndim=1, dtype="int64"))
        _ = R.call_packed("vm.builtin.check_tensor_info", x, R.prim_value(2), R.dtype("float32"), R.str("ErrorContext(fn=main, loc=param[0], param=x, annotation=R.Tensor((2, 3), dtype=\\"float32\\"))"), sinfo_args=R.Tuple)
        _1 = R.call_packed("vm.builtin.match_shape", x, shape_heap, R.prim_value(2), R.prim_value(1), R.prim_value(2), R.prim_value(1), R.prim_value(3), R.str("ErrorContext(fn=main, loc=param[0], param=x, annotation=R.Tensor((2, 3), dtype=\\"float32\\"))"), sinfo_args=R.Tuple)
        return x
'''

SYMBOLIC = '''
from graphc.script import ir as I, relax as R, tir as T

@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor(("n", 4), "float32"), y: R.Tensor(("n * 2", 4), "float32"),
             t: R.Tuple(R.Tensor(("m",), "int32"), R.Shape(["n", "m"])), k: R.Prim(value="m"),
             w: R.Tensor((3, 3), "float32"), z: R.Object) -> R.Shape(ndim=2):
        n = T.int64()
        m = T.int64()
        R.func_attr({"num_input": 4})
        a = R.match_cast(z, R.Tensor(("p", "n + p"), "float32"))
        p = T.int64()
        s = R.shape([n + p, m * 2])
        v = R.prim_value(m + 1)
        return s
'''

# Slots: n 0, n * 2 1, m 2, p 3, n + p 4, m * 2 5, m + 1 6. w (a weight past num_input, static) is
# checked like every parameter; z is only checked by the match_cast.
SYMBOLIC_EXPECTED = '''
from graphc.script import ir as I, relax as R, tir as T

@I.ir_module
class Module:
    @T.prim_func(private=True)
    def shape_func(H: T.Buffer((7,), "int64")):
        T.func_attr({"tir.is_host_func": True})
        H[T.int64(1)] = H[T.int64(0)] * T.int64(2)
        H[T.int64(5)] = H[T.int64(2)] * T.int64(2)
        H[T.int64(6)] = H[T.int64(2)] + T.int64(1)

    @T.prim_func(private=True)
    def shape_func1(H: T.Buffer((7,), "int64")):
        T.func_attr({"tir.is_host_func": True})
        H[T.int64(4)] = H[T.int64(0)] + H[T.int64(3)]

    @R.function
    def main(x: R.Tensor(("n", 4), dtype="float32"), y: R.Tensor(("n * 2", 4), dtype="float32"), t: R.Tuple(R.Tensor(("m",), dtype="int32"), R.Shape(["n", "m"])), k: R.Prim(value="m"), w: R.Tensor((3, 3), dtype="float32"), z: R.Object) -> R.Shape(ndim=2):
        R.func_attr({"num_input": 4})
        n = T.int64()
        m = T.int64()
        p = T.int64()
        cls = Module
        shape_heap = R.call_builtin_with_ctx(R.ExternFunc("vm.builtin.alloc_shape_heap"), (R.prim_value(7),), sinfo_args=R.Tensor(dtype="int64", ndim=1))
        _ = R.call_packed("vm.builtin.check_tensor_info", x, R.prim_value(2), R.dtype("float32"), R.str(""), sinfo_args=R.Tuple)
        _1 = R.call_packed("vm.builtin.check_tensor_info", y, R.prim_value(2), R.dtype("float32"), R.str(""), sinfo_args=R.Tuple)
        _2 = R.call_packed("vm.builtin.check_tuple_info", t, R.prim_value(2), R.str(""), sinfo_args=R.Tuple)
        t0: R.Tensor((m,), dtype="int32") = t[0]
        _3 = R.call_packed("vm.builtin.check_tensor_info", t0, R.prim_value(1), R.dtype("int32"), R.str(""), sinfo_args=R.Tuple)
        t1: R.Shape([n, m]) = t[1]
        _4 = R.call_packed("vm.builtin.check_shape_info", t1, R.prim_value(2), R.str(""), sinfo_args=R.Tuple)
        _5 = R.call_packed("vm.builtin.check_prim_value_info", k, R.dtype("int64"), R.str(""), sinfo_args=R.Tuple)
        _6 = R.call_packed("vm.builtin.check_tensor_info", w, R.prim_value(2), R.dtype("float32"), R.str(""), sinfo_args=R.Tuple)
        _7 = R.call_packed("vm.builtin.match_shape", x, shape_heap, R.prim_value(2), R.prim_value(2), R.prim_value(0), R.prim_value(1), R.prim_value(4), R.str(""), sinfo_args=R.Tuple)
        _8 = R.call_packed("vm.builtin.match_shape", y, shape_heap, R.prim_value(2), R.prim_value(0), R.prim_value(0), R.prim_value(1), R.prim_value(4), R.str(""), sinfo_args=R.Tuple)
        _9 = R.call_packed("vm.builtin.match_shape", t0, shape_heap, R.prim_value(1), R.prim_value(2), R.prim_value(2), R.str(""), sinfo_args=R.Tuple)
        _10 = R.call_packed("vm.builtin.match_shape", t1, shape_heap, R.prim_value(2), R.prim_value(3), R.prim_value(0), R.prim_value(3), R.prim_value(2), R.str(""), sinfo_args=R.Tuple)
        _11 = R.call_packed("vm.builtin.match_prim_value", k, shape_heap, R.prim_value(3), R.prim_value(2), R.str(""), sinfo_args=R.Tuple)
        _12 = R.call_packed("vm.builtin.match_shape", w, shape_heap, R.prim_value(2), R.prim_value(1), R.prim_value(3), R.prim_value(1), R.prim_value(3), R.str(""), sinfo_args=R.Tuple)
        _13 = cls.shape_func(shape_heap)
        _14 = R.call_packed("vm.builtin.match_shape", y, shape_heap, R.prim_value(2), R.prim_value(3), R.prim_value(1), R.prim_value(1), R.prim_value(4), R.str(""), sinfo_args=R.Tuple)
        _15 = R.call_packed("vm.builtin.check_tensor_info", z, R.prim_value(2), R.dtype("float32"), R.str(""), sinfo_args=R.Tuple)
        _16 = R.call_packed("vm.builtin.match_shape", z, shape_heap, R.prim_value(2), R.prim_value(2), R.prim_value(3), R.prim_value(0), R.prim_value(0), R.str(""), sinfo_args=R.Tuple)
        _17 = cls.shape_func1(shape_heap)
        _18 = R.call_packed("vm.builtin.match_shape", z, shape_heap, R.prim_value(2), R.prim_value(3), R.prim_value(3), R.prim_value(3), R.prim_value(4), R.str(""), sinfo_args=R.Tuple)
        a = R.match_cast(z, R.Tensor((p, n + p), dtype="float32"))
        s = R.call_packed("vm.builtin.make_shape", shape_heap, R.prim_value(2), R.prim_value(1), R.prim_value(4), R.prim_value(1), R.prim_value(5), sinfo_args=R.Shape([n + p, m * 2]))
        v = R.call_packed("vm.builtin.make_prim_value", shape_heap, R.prim_value(1), R.prim_value(6), sinfo_args=R.Prim(value=m + 1))
        return s
'''


def test_codes_are_tvms():
    assert [int(c) for c in MatchShapeCode] == [0, 1, 2, 3]
    assert [int(c) for c in MakeShapeCode] == [0, 1]


def test_static_parameter_checks_with_error_context():
    after = R.transform.VMShapeLower()(from_source(STATIC))
    assert_structural_equal(after, from_source(STATIC_EXPECTED))
    assert R.analysis.well_formed(after)


def test_symbolic_shapes():
    after = R.transform.VMShapeLower(emit_err_ctx=False)(from_source(SYMBOLIC))
    assert_structural_equal(after, from_source(SYMBOLIC_EXPECTED))
    assert R.analysis.well_formed(after)


def test_idempotent_and_printable():
    after = R.transform.VMShapeLower()(from_source(SYMBOLIC))
    assert R.transform.VMShapeLower()(after)["main"] is after["main"]
    assert_structural_equal(from_source(after.script()), after)


def test_error_context_names_function_parameter_and_annotation():
    after = R.transform.VMShapeLower()(from_source(SYMBOLIC))
    strings = {b.value.args[-1].value for b in after["main"].body.blocks[0].bindings
               if isinstance(b.value, R.Call) and isinstance(b.value.op, R.ExternFunc) and b.value.args
               and isinstance(b.value.args[-1], R.StringImm)}
    assert 'ErrorContext(fn=main, loc=param[0], param=x, annotation=R.Tensor((n, 4), dtype="float32"))' in strings
    assert 'ErrorContext(fn=main, loc=param[1], param=y, annotation=R.Tensor((n * 2, 4), dtype="float32"))' in strings
    assert 'ErrorContext(match_cast, struct_info=R.Tensor((p, n + p), dtype="float32"))' in strings


def test_shape_func_computes_on_the_heap():
    after = R.transform.VMShapeLower()(from_source(SYMBOLIC))
    lib = graphc.build(IRModule({"shape_func": after["shape_func"].with_attr("global_symbol", "shape_func")}),
                       target="llvm")
    heap = np.zeros(7, "int64")
    heap[0], heap[2] = 5, 3  # n, m
    lib["shape_func"](heap)
    assert heap.tolist() == [5, 10, 3, 0, 0, 6, 4]


def test_no_symbolic_values_no_heap():
    mod = from_source('''
from graphc.script import ir as I, relax as R, tir as T

@I.ir_module
class Module:
    @R.function
    def main(x: R.Object) -> R.Object:
        return x
''')
    after = R.transform.VMShapeLower()(mod)
    assert after["main"].body.blocks == ()


def test_undefined_symbolic_variable():
    # The script parser refuses such a signature (as TVM's does), so build it directly.
    n = tir.Var("n", "int64")
    x = R.Var("x", R.TensorStructInfo((n * 2,), "float32"))
    bb = R.BlockBuilder()
    with bb.function("main", [x]):
        bb.emit_func_output(x)
    mod = bb.get()
    with pytest.raises(TypeInferenceError, match=r"cannot compute n \* 2 in function 'main'"):
        R.transform.VMShapeLower()(mod)
