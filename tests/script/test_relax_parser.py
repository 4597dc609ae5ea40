"""The Relax script parser: `@R.function` in `@I.ir_module` classes, the `R.` names, errors."""

import pytest

from graphc import relax, tir
from graphc.errors import ScriptError
from graphc.ir.structural import structural_equal
from graphc.relax.op import list_ops
from graphc.script import from_source
from graphc.script import ir as I
from graphc.script import relax as R
from graphc.script import tir as T


@I.ir_module
class Module:
    @T.prim_func(private=True)
    def relu(x: T.Buffer((T.int64(1), T.int64(256)), "float32"),
             out: T.Buffer((T.int64(1), T.int64(256)), "float32")):
        for i, j in T.grid(T.int64(1), T.int64(256)):
            with T.block("compute"):
                vi, vj = T.axis.remap("SS", [i, j])
                out[vi, vj] = T.max(x[vi, vj], T.float32(0.0))

    @R.function
    def main(x: R.Tensor((1, 784), dtype="float32"),
             w: R.Tensor((256, 784), dtype="float32")) -> R.Tensor((1, 256), dtype="float32"):
        R.func_attr({"num_input": 1})
        cls = Module
        with R.dataflow():
            lv: R.Tensor((784, 256), dtype="float32") = R.permute_dims(w, axes=None)
            lv1: R.Tensor((1, 256), dtype="float32") = R.matmul(x, lv, out_dtype="float32")
            lv2 = R.call_tir(cls.relu, (lv1,), out_sinfo=R.Tensor((1, 256), dtype="float32"))
            gv: R.Tensor((1, 256), dtype="float32") = lv2
            R.output(gv)
        return gv


def test_brief_example_parses_with_dataflow_vars_and_global_vars():
    main = Module["main"]
    block = main.body.blocks[0]
    assert isinstance(block, relax.DataflowBlock)
    kinds = [type(b.var).__name__ for b in block.bindings]
    assert kinds == ["DataflowVar", "DataflowVar", "DataflowVar", "Var"]
    call = block.bindings[2].value
    assert call.args[0] is Module.get_global_var("relu")  # cls.relu is the module's own GlobalVar
    assert dict(main.attrs) == {"num_input": 1, "global_symbol": "main"}
    assert relax.analysis.well_formed(Module)
    assert structural_equal(from_source(Module.script()), Module)


@I.ir_module
class Symbolic:
    @R.function(private=True)
    def helper(a: R.Tensor(("n", 2), "float32")) -> R.Tensor(("n", 2), "float32"):
        return a

    @R.function(pure=False)
    def main(x: R.Tensor(("n", "m"), dtype="float32"), s: R.Shape(ndim=2), o: R.Object, p: R.Prim("int64"),
             q: R.Prim(value="n"), u: R.Tensor, v: R.Tensor(ndim=2, dtype="int8"),
             f: R.Callable((R.Tensor(ndim=2),), R.Object),
             ) -> R.Tuple(R.Tensor(("n", "m"), "float32"), R.Object):
        n = T.int64()
        m = T.int64()
        cls = Symbolic
        y: R.Tensor((n, m), dtype="float32") = R.multiply(x, R.const(2.0, "float32"))
        z = R.match_cast(u, R.Tensor(("k", 2), "float32"))
        h = cls.helper(z)
        sh = R.shape([n, k * 2])  # noqa: F821, F841 - k is defined by the match_cast above
        t = (y, h)
        first = t[0]
        packed = R.call_packed("my.print", first, sinfo_args=R.Object)
        return (first, packed)


def test_symbolic_names_are_shared_and_declarations_resolve():
    main = Symbolic["main"]
    x, q = main.params[0], main.params[4]
    n, m = x.struct_info.shape.values
    assert (n.name, m.name, n.dtype) == ("n", "m", "int64")
    assert q.struct_info.value is n
    bindings = main.body.blocks[0].bindings
    assert bindings[0].var.struct_info.shape.values[0] is n
    k = bindings[1].struct_info.shape.values[0]
    assert k.name == "k" and bindings[2].var.struct_info.shape.values[0] is k  # helper's n bound to k
    assert str(bindings[3].value) == "R.shape([n, k * 2])"
    assert not main.is_pure and "global_symbol" not in Symbolic["helper"].attrs
    params = [p.struct_info for p in main.params]
    assert [type(s).__name__ for s in params] == [
        "TensorStructInfo", "ShapeStructInfo", "ObjectStructInfo", "PrimStructInfo", "PrimStructInfo",
        "TensorStructInfo", "TensorStructInfo", "FuncStructInfo"]
    assert params[5].ndim == -1 and params[5].is_unknown_dtype and params[6].dtype == "int8"


def test_symbolic_module_round_trips():
    text = Symbolic.script()
    assert "k = T.int64()" in text and "R.match_cast(u, R.Tensor((k, 2), dtype=\"float32\"))" in text
    parsed = from_source(text)
    assert structural_equal(parsed, Symbolic) and parsed.script() == text


def test_if_else_branches_become_seq_exprs():
    @R.function
    def f(c: R.Prim("bool"), x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        if c:
            lv = R.nn.relu(x)
            out = lv
        else:
            out = R.add(x, x)
        return out

    binding = f.body.blocks[0].bindings[0]
    assert isinstance(binding.value, relax.If) and binding.var.name_hint == "out"
    assert isinstance(binding.value.true_branch, relax.SeqExpr)
    assert structural_equal(from_source(f.script()), f)


def test_every_registered_operator_is_reachable_by_name():
    for name in list_ops():  # (ops registered outside "relax." are R.<their full name>)
        obj = R
        for part in name.split(".")[1 if name.startswith("relax.") else 0:]:
            obj = getattr(obj, part)
        assert callable(obj), name


def test_generic_operator_call_maps_keywords_to_attrs():
    x = relax.Var("x", relax.TensorStructInfo((2, 3), "float32"))
    call = R.permute_dims(x, axes=[1, 0])
    assert call.op.name == "relax.permute_dims" and call.attrs["axes"] == (1, 0)
    assert str(R.matmul(x, x, out_dtype="float16")) == 'R.matmul(x, x, out_dtype="float16")'


def test_struct_info_annotations_in_plain_python():
    assert str(R.Tensor((1, 784), dtype="float32")) == 'R.Tensor((1, 784), dtype="float32")'
    assert R.Tensor(ndim=2).ndim == 2 and R.Shape([1, 2]).values[1].value == 2
    assert R.Prim(value=tir.IntImm("int64", 3)).dtype == "int64"
    assert isinstance(R.to_sinfo(R.Object), relax.ObjectStructInfo)
    assert R.Callable(None, R.Object).params is None


def _error(src: str) -> str:
    with pytest.raises(ScriptError) as info:
        from_source(src)
    return str(info.value)


def test_annotation_mismatch_names_binding_with_caret():
    message = _error('''
@R.function
def main(x: R.Tensor((2, 3), dtype="float32")):
    lv: R.Tensor((3, 2), dtype="float32") = R.add(x, x)
    return lv
''')
    assert "<string>:4:5: error: in main, binding 'lv' is annotated R.Tensor((3, 2)" in message
    assert "has struct info R.Tensor((2, 3), dtype=\"float32\")" in message
    assert message.splitlines()[-1].strip().startswith("^^^^")


def test_inference_error_points_at_the_call():
    message = _error('''
@R.function
def main(x: R.Tensor((2, 3), dtype="float32"), y: R.Tensor((2, 3), dtype="float16")):
    lv3 = R.add(x, y)
    return lv3
''')
    assert "expects equal dtypes" in message and "(in main, binding 'lv3')" in message
    assert message.splitlines()[-1] == "          ^^^^^^^^^^^"


@pytest.mark.parametrize("body,expected", [
    ("    lv = R.addd(x, x)\n    return lv", "did you mean R.add?"),
    ("    lv = R.nn.relu(x, foo=1)\n    return lv", "unknown keyword argument(s) ['foo']"),
    ("    with R.dataflow():\n        lv = R.add(x, x)\n    return lv", "ends with R.output(...)"),
    ("    with R.dataflow():\n        lv = R.add(x, x)\n        gv = lv\n        R.output(gv)\n    return lv",
     "list it in R.output(...)"),
    ("    y = x", "must end with `return value`"),
    ("    y = cls.f(x)\n    return y", "unknown name 'cls'"),
    ("    if x:\n        y = x\n    return y", "needs an `else` branch"),
])
def test_script_errors(body, expected):
    src = '@R.function\ndef main(x: R.Tensor((2, 3), dtype="float32")):\n' + body + "\n"
    assert expected in _error(src)


def test_return_annotation_is_checked():
    message = _error('''
@R.function
def main(x: R.Tensor((2, 3), dtype="float32")) -> R.Tensor((2, 4), dtype="float32"):
    return x
''')
    assert "is annotated to return R.Tensor((2, 4)" in message


def test_statements_only_valid_inside_functions_fail_outside():
    with pytest.raises(ScriptError, match="inside a function decorated with @R.function"):
        R.func_attr({"a": 1})
