"""The script syntax TVM's own code uses, as Before/Expected pairs: module names, tuple unpacking,
Python values where Relax expects shapes or prim values, runtime calls, nested functions, TVM's
annotation rules, and the scripts TVM refuses."""

import pytest

from graphc import relax, te, topi
from graphc.errors import ScriptError
from graphc.ir import IRModule, assert_structural_equal, structural_equal
from graphc.script import from_source
from graphc.script import ir as I
from graphc.script import relax as R
from graphc.script import tir as T


def roundtrip(node):
    again = from_source(node.script())
    assert structural_equal(again, node), node.script()
    return again


def test_functions_named_through_the_class():
    @I.ir_module
    class Before:
        @T.prim_func(private=True)
        def add(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
            for i in range(4):
                with T.block("add"):
                    vi = T.axis.spatial(4, i)
                    B[vi] = A[vi] + T.float32(1)

        @R.function
        def helper(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
            y = R.call_tir(Before.add, (x,), R.Tensor((4,), "float32"))
            return y

        @R.function
        def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
            y = Before.helper(x)
            return y

    @I.ir_module
    class Expected:
        @T.prim_func(private=True)
        def add(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
            for i in range(4):
                with T.block("add"):
                    vi = T.axis.spatial(4, i)
                    B[vi] = A[vi] + T.float32(1)

        @R.function
        def helper(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
            cls = Expected
            y = R.call_tir(cls.add, (x,), R.Tensor((4,), "float32"))
            return y

        @R.function
        def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
            cls = Expected
            y = cls.helper(x)
            return y

    assert_structural_equal(Before, Expected)
    assert Before.get_global_var("helper").struct_info is Before["helper"].struct_info
    roundtrip(Before)


def test_calling_a_global_var_of_another_module():
    @I.ir_module
    class Library:
        @R.function
        def double(x: R.Tensor((2,), "float32")) -> R.Tensor((2,), "float32"):
            y = R.add(x, x)
            return y

    double = Library.get_global_var("double")

    @R.function
    def main(x: R.Tensor((2,), "float32")):
        y = double(x)
        return y

    assert repr(main.ret_struct_info) == 'R.Tensor((2,), dtype="float32")'


def test_tuple_unpacking():
    @R.function(private=True)
    def before(x: R.Tensor((4, 6), "float32")):
        with R.dataflow():
            lv0, lv1 = R.split(x, 2, axis=1)
            gv = R.add(lv0, lv1)
            R.output(gv)
        return gv

    @R.function(private=True)
    def expected(x: R.Tensor((4, 6), "float32")):
        with R.dataflow():
            lv = R.split(x, 2, axis=1)
            lv0 = lv[0]
            lv1 = lv[1]
            gv = R.add(lv0, lv1)
            R.output(gv)
        return gv

    assert_structural_equal(before, expected)
    with pytest.raises(ScriptError, match="cannot unpack a value of struct info R.Tensor"):
        @R.function
        def bad(x: R.Tensor((4,), "float32")):
            a, b = R.add(x, x)
            return a


def test_python_values_where_relax_expects_shapes_and_prim_values():
    @R.function(private=True)
    def before(x: R.Tensor(("n",), "float32")):
        n = T.int64()
        a = R.full((2, 3), R.const(1.0, "float32"), "float32")
        b = R.broadcast_to(x, (4, n))
        c = R.call_pure_packed("f", 1, 2.5, "text", sinfo_args=R.Object)
        return (a, b, c)

    @R.function(private=True)
    def expected(x: R.Tensor(("n",), "float32")):
        n = T.int64()
        a = R.full(R.shape([2, 3]), R.const(1.0, "float32"), "float32")
        b = R.broadcast_to(x, R.shape([4, n]))
        c = R.call_pure_packed("f", R.prim_value(1), R.prim_value(2.5), R.str("text"), sinfo_args=R.Object)
        return (a, b, c)

    assert_structural_equal(before, expected)


def test_arithmetic_on_relax_values():
    @R.function(private=True)
    def before(x: R.Tensor((4,), "float32"), y: R.Tensor((4,), "float32"), p: R.Prim("int64")):
        a = -x + y * 2.0
        b = (x / y) ** y
        c = x < y
        d = x.astype("float16")
        q = p + 1
        return (a, b, c, d, q)

    @R.function(private=True)
    def expected(x: R.Tensor((4,), "float32"), y: R.Tensor((4,), "float32"), p: R.Prim("int64")):
        lv = R.negative(x)
        lv1 = R.multiply(y, R.const(2.0, "float32"))
        a = R.add(lv, lv1)
        lv2 = R.divide(x, y)
        b = R.power(lv2, y)
        c = R.less(x, y)
        d = R.astype(x, "float16")
        q = R.add(p, R.prim_value(1))
        return (a, b, c, d, q)

    assert_structural_equal(before, expected)
    assert repr(before.body.blocks[0].bindings[-1].var.struct_info) == 'R.Prim("int64")'


def test_symbolic_variables_declared_anywhere_in_the_body():
    @R.function(private=True)
    def before(x: R.Tensor("float32", ndim=2)):
        with R.dataflow():
            n, m = T.int64(), T.int64()
            y = R.match_cast(x, R.Tensor((n, m), "float32"))
            z = R.reshape(y, (m, n))
            R.output(z)
        return z

    assert repr(before.ret_struct_info) == 'R.Tensor(dtype="float32", ndim=2)'
    roundtrip(before)


def test_module_attributes_and_global_infos():
    @I.ir_module
    class Module:
        I.module_attrs({"system_lib_prefix": "lib_"})
        I.module_global_infos({"dummy": [I.dummy_global_info(), I.dummy_global_info()]})

        @R.function
        def main(x: R.Tensor((2,), "float32")):
            R.func_attr({"num_input": 1})
            return x

    assert Module.attrs == {"system_lib_prefix": "lib_"} and len(Module.global_infos["dummy"]) == 2
    assert Module["main"].attrs["num_input"] == 1
    roundtrip(Module)
    with_attrs = Module.with_attrs({"a": 1, "b": "two"})
    assert with_attrs.attrs == {"system_lib_prefix": "lib_", "a": 1, "b": "two"} and "a" not in Module.attrs


def test_runtime_calls_parse_print_and_parse_back():
    @I.ir_module
    class Module:
        @T.prim_func
        def inplace(A: T.Buffer((2,), "float32")):
            for i in range(2):
                with T.block("inc"):
                    vi = T.axis.spatial(2, i)
                    A[vi] = A[vi] + T.float32(1)

        @R.function(pure=False)
        def main(x: R.Tensor((2,), "float32")):
            R.call_packed("my.print", x, sinfo_args=R.Tuple())
            b = R.call_pure_packed("my.identity", x, sinfo_args=R.Tensor((2,), "float32"))
            c = R.call_dps_packed("my.copy", (b,), R.Tensor((2,), "float32"))
            d = R.call_tir_inplace(Module.inplace, (c,), [0], R.Tensor((2,), "float32"))
            e = R.call_inplace_packed("my.update", d, inplace_indices=[0], sinfo_args=R.Tensor((2,), "float32"))
            R.print(e, format="e = {}")
            R.assert_op(R.const(True), e, format="never")
            s = R.shape_of(e)
            return s

    text = Module.script()
    for expected in ['R.call_pure_packed("my.identity", x,', 'R.call_dps_packed("my.copy", (b,), out_sinfo=',
                     "R.call_tir_inplace(cls.inplace, (c,), out_sinfo=", "inplace_indices=[0]",
                     'R.print(e, format=R.str("e = {}"))', 'R.assert_op(R.const(True, "bool"), e, format=']:
        assert expected in text, text
    roundtrip(Module)
    assert repr(Module["main"].body.blocks[0].bindings[-1].var.struct_info) == "R.Shape([2])"


def test_emit_te_adds_the_prim_func_to_the_module():
    @I.ir_module
    class Module:
        @R.function
        def main(x: R.Tensor((10, 20), "float32")) -> R.Tensor((10, 20), "float32"):
            lv = R.emit_te(topi.add, x, x)
            out = R.emit_te(lambda a: te.compute(a.shape, lambda i, j: a[i, j] * 2.0, name="twice"), lv)
            return out

    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorStructInfo((10, 20), "float32"))
    with bb.function("main", [x]):
        lv = bb.emit_te(topi.add, x, x)
        out = bb.emit_te(lambda a: te.compute(a.shape, lambda i, j: a[i, j] * 2.0, name="twice"), lv)
        bb.emit_func_output(out)
    assert [gv.name_hint for gv in Module.get_global_vars()] == ["add", "main", "twice"]
    assert_structural_equal(Module, bb.get())


def test_nested_functions():
    @R.function
    def main(x: R.Tensor((2,), "float32"), y: R.Tensor((2,), "float32")) -> R.Tensor((2,), "float32"):
        @R.function
        def add_x(z: R.Tensor((2,), "float32")) -> R.Tensor((2,), "float32"):
            s = R.add(z, x)
            return s

        out = add_x(y)
        return out

    inner = main.body.blocks[0].bindings[0].value
    assert isinstance(inner, relax.Function) and "global_symbol" not in inner.attrs
    text = main.script()
    assert "    @R.function\n    def add_x(z: " in text
    roundtrip(main)


def test_annotations_follow_tvm():
    @R.function
    def func(x: R.Tensor, w: R.Tensor(("m", "n"), "float32")):
        y: R.Object = x  # a value with struct info keeps its own
        z: R.Object = R.add(x, x)  # a call takes the annotation
        q: R.Tensor(ndim=2) = R.add(x, x)  # even a more precise one
        return (y, z, q)

    y, z, q = (b.var.struct_info for b in func.body.blocks[0].bindings)
    assert (repr(y), repr(z), repr(q)) == ("R.Tensor()", "R.Object", "R.Tensor(ndim=2)")
    with pytest.raises(ScriptError, match=r"binding 'v' is annotated R.Shape\(ndim=-1\), but its value has"):
        @R.function
        def bad(x: R.Tensor((2,), "float32")):
            v: R.Shape = x
            return v
    with pytest.raises(ScriptError, match=r"annotated R.Tensor\(\(3,\), dtype=\"float32\"\), but its value"):
        @R.function
        def bad2(x: R.Tensor((2,), "float32")):
            v: R.Tensor((3,), "float32") = R.add(x, x)
            return v


def test_a_return_annotation_less_precise_than_the_body_gives_way():
    @R.function
    def func(x: R.Tensor((2,), "float32")) -> R.Tensor:
        y = R.add(x, x)
        return y

    assert repr(func.ret_struct_info) == 'R.Tensor((2,), dtype="float32")'


def test_module_level_extern_func():
    @I.ir_module
    class Module:
        ext = R.ExternFunc("my_ext")

        @R.function
        def main(a: R.Tensor((2,), "float32")) -> R.Tensor((2,), "float32"):
            return a

    assert isinstance(Module["ext"], relax.ExternFunc)
    assert '    ext = R.ExternFunc("my_ext")' in Module.script()
    roundtrip(Module)


def test_tvm_names_graphc_lacks_are_reported():
    with pytest.raises(AttributeError, match=r"R.macro is not supported by graphc \(script macros"):
        R.macro  # noqa: B018
    with pytest.raises(AttributeError, match="R.image.resize3d is not supported by graphc"):
        R.image.resize3d  # noqa: B018
    with pytest.raises(AttributeError, match="R.addd is neither a script name nor a registered Relax operator"):
        R.addd  # noqa: B018


@pytest.mark.parametrize("source,message", [
    ('''
@R.function
def f(x: R.Tensor((2,), "float32")):
    R.add(x, x)
    return x
''', "is not used; assign it to a variable"),
    ('''
@R.function(private=True)
def f(x: R.Tensor((2,), "float32")):
    R.func_attr({"global_symbol": "f"})
    return x
''', "private, so it cannot have a global_symbol"),
    ('''
@R.function
def f(x: R.Tensor(("m + 1", "m * 2"), "float32")):
    return x
''', r"symbolic variable\(s\) m of parameter 'x' are used in expressions but never given by themselves"),
    ('''
@R.function
def f(x: R.Tensor(dtype="float32", ndim=-2)):
    return x
''', "expects ndim to be a non-negative int or -1"),
    ('''
@R.function
def f(x: R.Tensor(dtype="float32", ndim="1")):
    return x
''', "expects ndim to be a non-negative int or -1"),
    ('''
@R.function
def f(x: R.Tensor(("m", "n"), "float32")):
    m = T.int64()
    n = T.int32()
    return x
''', "shape dimensions are int64, but n is int32"),
    ('''
@R.function
def f(c: R.Prim("bool"), x: R.Tensor((2,), "float32")):
    with R.dataflow():
        if c:
            y = x
        else:
            y = x
        R.output(y)
    return y
''', "not allowed inside a dataflow block"),
    ('''
@R.function
def f(x: R.Tensor((2,), "float32", "cuda:0")):
    return x
''', "virtual devices are not supported by graphc"),
])
def test_scripts_tvm_refuses_are_refused(source, message):
    with pytest.raises(ScriptError, match=message):
        from_source(source)


def test_an_incompatible_return_annotation_is_an_error():
    # TVM keeps such an annotation silently; graphc reports it
    with pytest.raises(ScriptError, match=r"annotated to return R.Tuple\(\), but its body has struct info"):
        from_source('''
@R.function
def f(x: R.Tensor((2,), "float32")) -> None:
    return x
''')


def test_ir_module_and_prim_func_accept_tvms_flags():
    @I.ir_module(s_tir=True)
    class Module:
        @T.prim_func(s_tir=True)
        def main(A: T.Buffer((2,), "float32")):
            for i in range(2):
                with T.sblock("zero"):
                    vi = T.axis.spatial(2, i)
                    A[vi] = T.float32(0)

    assert isinstance(Module, IRModule) and "main" in Module
