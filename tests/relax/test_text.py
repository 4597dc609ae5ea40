"""The minimal R. text used by repr/str/script until graphc.script learns Relax."""

from graphc import relax, te, tir

R = relax


def test_module_script_prints_relax_and_tir_functions():
    x = R.Var("x", R.TensorStructInfo((4,), "float32"))
    bb = R.BlockBuilder()
    with bb.function("main", [x]):
        lv = bb.emit_te(lambda a: te.compute(a.shape, lambda i: a[i] * 2.0, name="double"), x)
        bb.emit_func_output(lv)
    text = bb.get().script()
    assert "@I.ir_module" in text and "@T.prim_func(private=True)" in text and "def double(" in text
    assert "# from graphc.script import relax as R" in text
    assert '    @R.function\n    def main(x: R.Tensor((4,), dtype="float32")) -> ' \
           'R.Tensor((4,), dtype="float32"):' in text
    assert '        cls = Module\n        gv = R.call_tir(cls.double, (x,), out_sinfo=R.Tensor((4,), ' \
           'dtype="float32"))' in text


def test_str_and_repr_of_nodes():
    n = tir.Var("n", "int64")
    x = R.Var("x", R.TensorStructInfo((n, 2), "float32"))
    assert str(x) == "x" and repr(x) == "x"
    assert str(R.op.matmul(x, x, "float16")) == 'R.matmul(x, x, out_dtype="float16")'
    assert str(R.TupleGetItem(R.Tuple([x]), 0)) == "(x,)[0]"
    assert str(R.const(2.0)) == 'R.const(2.0, "float32")'
    assert str(R.const([[1] * 4] * 4, "int8")) == 'R.const(<int8 tensor of shape (4, 4)>)'
    assert str(R.StringImm("s")) == 'R.str("s")' and str(R.DataTypeImm("int8")) == 'R.dtype("int8")'
    assert str(R.ExternFunc("f")) == 'R.ExternFunc("f")' and str(R.PrimValue(n)) == "R.prim_value(n)"
    assert str(R.Op.get("relax.add")) == "Op('relax.add')"
    assert str(x.struct_info) == 'R.Tensor((n, 2), dtype="float32")'
    assert R.TensorStructInfo((n,), "float32").script() == 'R.Tensor((n,), dtype="float32")'


def test_function_text_with_if_and_impure_attr():
    c = R.Var("c", R.PrimStructInfo("bool"))
    x = R.Var("x", R.TensorStructInfo((2,), "float32"))
    bb = R.BlockBuilder()
    with bb.function("f", [c, x], pure=False):
        out = bb.emit(R.If(c, R.op.nn.relu(x), x))
        bb.emit_func_output(out)
    f = bb.get()["f"]
    text = f.script()
    assert text.startswith("# from graphc.script import relax as R\n\n@R.function(pure=False)\ndef f(")
    assert '    if c:\n        gv: R.Tensor((2,), dtype="float32") = R.nn.relu(x)\n' \
           '        gv1: R.Tensor((2,), dtype="float32") = gv\n    else:\n' in text  # the branch's binding
    assert "if c:" in str(bb.lookup_binding(out)) and "else:" in str(bb.lookup_binding(out))
    assert repr(f).splitlines()[1].startswith("def f(")
