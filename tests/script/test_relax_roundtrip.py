"""Print then parse is the identity for Relax modules (a corpus built with the BlockBuilder).

Modules are compared function by function: a PrimFunc made by `emit_te` shares its symbolic
variables with the Relax function that calls it, which the printed text (one scope per
function) does not preserve.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphc import relax, te, tir
from graphc.ir.structural import structural_equal
from graphc.script import from_source

R = relax


def t(*shape, dtype="float32"):
    return R.TensorStructInfo(shape, dtype)


def assert_roundtrip(mod):
    text = mod.script()
    parsed = from_source(text)
    assert [g.name_hint for g in parsed.get_global_vars()] == [g.name_hint for g in mod.get_global_vars()]
    for gv in mod.get_global_vars():
        assert structural_equal(parsed[gv.name_hint], mod[gv]), f"{gv.name_hint} differs:\n{text}"
    assert parsed.script() == text
    return text


def mlp():
    from tests.script.test_relax_golden import tutorial_mlp

    return tutorial_mlp()


def symbolic():
    n, m = tir.Var("n", "int64"), tir.Var("m", "int64")
    x, w = R.Var("x", t(n, 784)), R.Var("w", t(m, 784))
    bb = R.BlockBuilder()
    with bb.function("main", [x, w]):
        with bb.dataflow():
            lv = bb.emit(R.op.permute_dims(w))
            lv1 = bb.emit(R.op.matmul(x, lv))
            lv2 = bb.emit(R.op.reshape(lv1, (n * m,)))
            gv = bb.emit_output(R.op.nn.relu(lv2))
        bb.emit_func_output(gv)
    return bb.get()


def tuples_and_match_cast():
    x = R.Var("x", t(2, 3))
    y = R.Var("y", R.TensorStructInfo(ndim=2, dtype="float32"))
    bb = R.BlockBuilder()
    with bb.function("main", [x, y]):
        tup = bb.emit(R.Tuple([x, y, R.Tuple([x])]))
        first = bb.emit(R.TupleGetItem(tup, 0))
        inner = bb.emit(R.TupleGetItem(R.TupleGetItem(tup, 2), 0))
        k = tir.Var("k", "int64")
        z = bb.match_cast(y, t(k, 3), "z")
        s = bb.match_cast(R.ShapeExpr([k, 3]), R.ShapeStructInfo(ndim=2), "s")
        bb.emit_func_output(R.Tuple([first, inner, z, s, R.Tuple([])]))
    return bb.get()


def branches():
    c = R.Var("c", R.PrimStructInfo("bool"))
    x = R.Var("x", t(4))
    bb = R.BlockBuilder()
    with bb.function("main", [c, x]):
        out = bb.emit(R.If(c, R.op.nn.relu(x), R.op.multiply(x, R.const(2.0, "float32"))), "out")
        bb.emit_func_output(out)
    return bb.get()


def calls_between_functions():
    bb = R.BlockBuilder()
    n = tir.Var("n", "int64")
    a = R.Var("a", t(n, 2))
    with bb.function("double", [a], private=True):
        bb.emit_func_output(bb.emit(R.op.add(a, a)))
    x = R.Var("x", t(8, 2))
    with bb.function("main", [x]):
        gv = bb.emit(R.Call(bb.get().get_global_var("double"), [x]))
        bb.emit_func_output(gv)
    return bb.get()


def call_tir_with_tir_vars():
    n = tir.Var("n", "int64")
    x = R.Var("x", t(n, 4))
    bb = R.BlockBuilder()

    with bb.function("main", [x]):
        with bb.dataflow():
            lv = bb.emit_te(lambda a: te.compute(a.shape, lambda i, j: a[i, j] * 2.0, name="double"), x)
            gv = bb.emit_output(R.op.add(lv, lv))
        bb.emit_func_output(gv)
    mod = bb.get()
    gv_double = mod.get_global_var("double")
    bb = R.BlockBuilder(mod)
    y = R.Var("y", t(n, 4))
    with bb.function("with_vars", [y]):
        out = bb.emit(R.op.call_tir(gv_double, [y], t(n, 4), tir_vars=R.ShapeExpr([n])))
        pair = bb.emit(R.op.call_tir(gv_double, [y], [t(n, 4), t(n, 4)]))
        bb.emit_func_output(R.Tuple([out, pair]))
    return bb.get()


def leaves_and_constants():
    n = tir.Var("n", "int64")
    x = R.Var("x", t(n, 4))
    f = R.Var("f", R.FuncStructInfo([R.TensorStructInfo(ndim=2, dtype="float32")],
                                     R.TensorStructInfo(ndim=2, dtype="float32")))
    o, s = R.Var("o", R.ObjectStructInfo()), R.Var("s", R.ShapeStructInfo(ndim=2))
    u, p = R.Var("u", R.TensorStructInfo(dtype="")), R.Var("p", R.PrimStructInfo("int64"))
    bb = R.BlockBuilder()
    with bb.function("main", [x, f, o, s, u, p], pure=False, attrs={"num_input": 2}):
        c = bb.emit(R.op.add(x, R.const(np.arange(4, dtype="float32"))))
        big = bb.emit(R.const(np.linspace(0, 1, 300, dtype="float32").reshape(3, 100)))
        i8 = bb.emit(R.const(np.array([[1, -2], [3, 4]], dtype="int8")))
        scalar = bb.emit(R.op.multiply(c, R.const(-0.1, "float32")))
        pv = bb.emit(R.PrimValue(n * 2))
        pv32 = bb.emit(R.PrimValue(tir.IntImm("int32", 7)))
        strs = bb.emit(R.Tuple([R.StringImm("hi \"there\""), R.DataTypeImm("float16"), R.ShapeExpr([1, n])]))
        packed = bb.emit(R.Call(R.ExternFunc("my.func"), [scalar], sinfo_args=[t(n, 4)]))
        called = bb.emit(R.Call(f, [packed]))
        bb.emit_func_output(R.Tuple([called, big, i8, pv, pv32, strs, o, s, u, p]))
    return bb.get()


CORPUS = {
    "mlp": mlp, "symbolic": symbolic, "tuples_and_match_cast": tuples_and_match_cast, "branches": branches,
    "calls_between_functions": calls_between_functions, "call_tir_with_tir_vars": call_tir_with_tir_vars,
    "leaves_and_constants": leaves_and_constants,
}


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_print_then_parse_is_identity(name):
    mod = CORPUS[name]()
    assert relax.analysis.well_formed(mod) or name == "leaves_and_constants"
    assert_roundtrip(mod)


def test_symbolic_signature_uses_strings_and_body_declares_vars():
    text = assert_roundtrip(symbolic())
    assert 'def main(x: R.Tensor(("n", 784), dtype="float32"), ' \
           'w: R.Tensor(("m", 784), dtype="float32"))' in text
    assert "        n = T.int64()\n        m = T.int64()\n" in text
    assert 'R.reshape(lv1, R.shape([n * m]))' in text


def test_constants_inline_scalars_and_metadata_tensors():
    text = assert_roundtrip(leaves_and_constants())
    assert 'R.multiply(gv, R.const(-0.1, "float32"))' in text
    assert 'metadata = {"relax.expr.Constant": [\n    R.const([0.0, 1.0, 2.0, 3.0], "float32"),' in text
    assert 'R.const_from_base64(' in text and 'R.const([[1, -2], [3, 4]], "int8")' in text
    assert '= R.add(x, metadata["relax.expr.Constant"][0])' in text
    assert "@R.function(pure=False)" in text and 'R.func_attr({"num_input": 2})' in text


def test_if_prints_branches_assigning_the_binding_var():
    text = assert_roundtrip(branches())
    assert "        if c:\n" in text and "        else:\n" in text
    assert '            out: R.Tensor((4,), dtype="float32") = gv\n' in text


def test_private_function_and_call_through_cls():
    text = assert_roundtrip(calls_between_functions())
    assert "    @R.function(private=True)\n    def double(" in text
    assert '        gv: R.Tensor((8, 2), dtype="float32") = cls.double(x)' in text


def test_call_tir_tir_vars_and_tuple_outputs():
    text = assert_roundtrip(call_tir_with_tir_vars())
    assert "tir_vars=R.shape([n])" in text
    assert 'out_sinfo=[R.Tensor((n, 4), dtype="float32"), R.Tensor((n, 4), dtype="float32")]' in text


def test_standalone_function_roundtrip():
    func = symbolic()["main"]
    text = func.script()
    assert text.startswith("# from graphc.script import tir as T\n# from graphc.script import relax as R\n\n")
    assert structural_equal(from_source(text), func)


IMPURE_WITH_NESTED_DATAFLOW = '''
@R.function(pure=False)
def main(c: R.Prim("bool"), x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
    R.call_packed("my.print", x, sinfo_args=R.Object)
    if c:
        with R.dataflow():
            lv = R.nn.relu(x)
            gv = R.add(lv, lv)
            R.output(gv)
        out = gv
    else:
        out = x
    return out
'''


def test_source_with_statement_call_and_dataflow_in_branch_round_trips():
    func = from_source(IMPURE_WITH_NESTED_DATAFLOW)
    text = func.script()
    assert '    _: R.Object = R.call_packed("my.print", x, sinfo_args=R.Object)\n' in text
    assert "    if c:\n        with R.dataflow():\n" in text
    again = from_source(text)
    assert structural_equal(again, func) and again.script() == text


def _random_function(draw_ops, dims, use_dataflow):
    """A function applying `draw_ops` (op codes) to a (d0, d1) tensor, every value kept alive."""
    x = R.Var("x", t(*dims))
    bb = R.BlockBuilder()
    with bb.function("main", [x]):
        if use_dataflow:
            bb.begin_dataflow_block()
        values = [x]
        for code, pick, scalar in draw_ops:
            a = values[pick % len(values)]
            if code == 0:
                expr = R.op.nn.relu(a)
            elif code == 1:
                expr = R.op.add(a, R.const(scalar, "float32"))
            elif code == 2:
                expr = R.op.multiply(a, values[(pick + 1) % len(values)])
            elif code == 3:
                expr = R.TupleGetItem(bb.emit(R.Tuple([a, x])), 0)
            else:
                expr = R.op.permute_dims(R.op.permute_dims(a))
            values.append(bb.emit(expr))
        result = R.Tuple(values[1:]) if len(values) > 1 else x
        if use_dataflow:
            result = bb.emit_output(result)
            bb.end_block()
        bb.emit_func_output(result)
    return bb.get()


@settings(max_examples=40, deadline=None)
@given(ops=st.lists(st.tuples(st.integers(0, 4), st.integers(0, 9),
                              st.floats(-1e6, 1e6, allow_nan=False, width=32)), max_size=8),
       symbolic=st.booleans(), use_dataflow=st.booleans())
def test_random_functions_round_trip(ops, symbolic, use_dataflow):
    dims = (tir.Var("n", "int64") if symbolic else 3, 4)
    assert_roundtrip(_random_function(ops, dims, use_dataflow))
