"""BlockBuilder: the tutorial MLP, naming, normalization, scopes and every misuse error."""

import pytest

from graphc import relax, tir
from graphc.errors import TypeInferenceError
from graphc.ir import GlobalVar, IRModule, structural_equal, structural_hash

R = relax


def T(shape, dtype="float32"):
    return R.TensorStructInfo(shape, dtype)


def build_mlp():
    """The ir_module tutorial's MLP: x (1, 784) -> fc1 (256) -> relu -> fc2 (10)."""
    x = R.Var("x", T((1, 784)))
    w1, b1 = R.Var("p_fc1_weight", T((256, 784))), R.Var("p_fc1_bias", T((256,)))
    w2, b2 = R.Var("p_fc2_weight", T((10, 256))), R.Var("p_fc2_bias", T((10,)))
    bb = R.BlockBuilder()
    with bb.function("main", [x, w1, b1, w2, b2], attrs={"num_input": 1}):
        with bb.dataflow():
            lv = bb.emit(R.op.permute_dims(w1, axes=None))
            lv1 = bb.emit(R.op.matmul(x, lv, out_dtype="float32"))
            lv2 = bb.emit(R.op.add(lv1, b1))
            lv3 = bb.emit(R.op.nn.relu(lv2))
            lv4 = bb.emit(R.op.permute_dims(w2, axes=None))
            lv5 = bb.emit(R.op.matmul(lv3, lv4, out_dtype="float32"))
            lv6 = bb.emit(R.op.add(lv5, b2))
            gv = bb.emit_output(lv6)
        bb.emit_func_output(gv)
    return bb.get()


MLP_TEXT = '''\
@R.function
def main(x: R.Tensor((1, 784), dtype="float32"), p_fc1_weight: R.Tensor((256, 784), dtype="float32"), \
p_fc1_bias: R.Tensor((256,), dtype="float32"), p_fc2_weight: R.Tensor((10, 256), dtype="float32"), \
p_fc2_bias: R.Tensor((10,), dtype="float32")) -> R.Tensor((1, 10), dtype="float32"):
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
    return gv'''


def test_tutorial_mlp_bindings_and_struct_info():
    mod = build_mlp()
    func = mod["main"]
    assert isinstance(func, R.Function) and func.attrs == {"num_input": 1, "global_symbol": "main"}
    (block,) = func.body.blocks
    assert isinstance(block, R.DataflowBlock)
    names = [b.var.name_hint for b in block.bindings]
    assert names == ["lv", "lv1", "lv2", "lv3", "lv4", "lv5", "lv6", "gv"]
    assert [type(b.var).__name__ for b in block.bindings] == ["DataflowVar"] * 7 + ["Var"]
    ops = [b.value.op.name for b in block.bindings[:-1]]
    assert ops == ["relax.permute_dims", "relax.matmul", "relax.add", "relax.nn.relu",
                   "relax.permute_dims", "relax.matmul", "relax.add"]
    shapes = [tuple(d.value for d in b.var.struct_info.shape.values) for b in block.bindings]
    assert shapes == [(784, 256), (1, 256), (1, 256), (1, 256), (256, 10), (1, 10), (1, 10), (1, 10)]
    assert func.body.body is block.bindings[-1].var
    assert repr(func.ret_struct_info) == 'R.Tensor((1, 10), dtype="float32")'
    assert func.script().endswith(MLP_TEXT)
    assert R.analysis.well_formed(mod)


def test_independently_built_functions_are_structurally_equal():
    a, b = build_mlp(), build_mlp()
    assert a["main"] is not b["main"]
    assert structural_equal(a["main"], b["main"]) and structural_equal(a, b)
    assert structural_hash(a["main"]) == structural_hash(b["main"])


def test_structural_inequality_on_a_changed_op():
    x = R.Var("x", T((2,)))

    def build(op):
        bb = R.BlockBuilder()
        with bb.function("f", [x]):
            bb.emit_func_output(bb.emit(op(x, x)))
        return bb.get()["f"]

    assert structural_equal(build(R.op.add), build(R.op.add))
    assert not structural_equal(build(R.op.add), build(R.op.multiply))


def test_emit_normalizes_nested_calls_to_a_normal_form():
    x = R.Var("x", T((2, 3)))
    bb = R.BlockBuilder()
    with bb.function("f", [x]):
        with bb.dataflow():
            y = bb.emit(R.op.add(R.op.nn.relu(x), R.op.permute_dims(R.op.permute_dims(x))))
            gv = bb.emit_output(y)
        bb.emit_func_output(gv)
    bindings = bb.get()["f"].body.blocks[0].bindings
    assert [str(b.value) for b in bindings] == [
        "R.nn.relu(x)", "R.permute_dims(x, axes=None)", "R.permute_dims(lv1, axes=None)", "R.add(lv, lv2)",
        "lv3"]
    assert R.analysis.well_formed(bb.get())


def test_normalize_tuple_args_and_lookup_binding():
    x = R.Var("x", T((2,)))
    bb = R.BlockBuilder()
    with bb.function("f", [x]):
        t = bb.emit(R.Tuple([x, R.op.nn.relu(x)]))
        item = bb.emit(R.TupleGetItem(t, 1))
        bb.emit_func_output(item)
    assert isinstance(bb.lookup_binding(t), R.Tuple)
    assert bb.lookup_binding(item).index == 1 and bb.lookup_binding(x) is None
    assert repr(item.struct_info) == 'R.Tensor((2,), dtype="float32")'
    assert isinstance(bb.get()["f"].body.blocks[0], R.BindingBlock)


def test_names_and_explicit_name_hints():
    x = R.Var("x", T((2,)))
    bb = R.BlockBuilder()
    with bb.function("f", [x]):
        a = bb.emit(R.op.nn.relu(x), name_hint="a")
        a1 = bb.emit(R.op.nn.relu(a), name_hint="a")
        g = bb.emit(R.op.nn.relu(a1))
        bb.emit_func_output([g, a])
    assert [a.name_hint, a1.name_hint, g.name_hint] == ["a", "a1", "gv"]
    assert isinstance(bb.get()["f"].ret_struct_info, R.TupleStructInfo)


def test_function_output_call_is_bound_and_params_given_late():
    x = R.Var("x", T((2,)))
    bb = R.BlockBuilder()
    with bb.function("f"):
        gv = bb.emit_func_output(R.op.nn.relu(x), params=[x])
    f = bb.get()[gv]
    assert f.params == (x,) and isinstance(f.body.body, R.Var)
    assert str(f.body.blocks[0].bindings[0].value) == "R.nn.relu(x)"


def test_private_and_impure_functions():
    x = R.Var("x", T((2,)))
    bb = R.BlockBuilder()
    with bb.function("helper", [x], private=True, pure=False):
        bb.emit_func_output(x)
    f = bb.get()["helper"]
    assert "global_symbol" not in f.attrs and not f.is_pure and not f.struct_info.purity


def test_match_cast_defines_symbolic_vars():
    n = tir.Var("n", "int64")
    x = R.Var("x", R.TensorStructInfo(ndim=2, dtype="float32"))
    bb = R.BlockBuilder()
    with bb.function("f", [x]):
        with bb.dataflow():
            y = bb.match_cast(x, T((n, 4)))
            z = bb.emit(R.op.add(y, y))
            gv = bb.emit_output(z)
        bb.emit_func_output(gv)
    assert isinstance(y, R.DataflowVar) and repr(z.struct_info) == 'R.Tensor((n, 4), dtype="float32")'
    binding = bb.get()["f"].body.blocks[0].bindings[0]
    assert isinstance(binding, R.MatchCast) and binding.value is x
    # n is defined only inside the body, so the function's return type forgets it
    assert repr(bb.get()["f"].ret_struct_info) == 'R.Tensor(dtype="float32", ndim=2)'
    assert R.analysis.well_formed(bb.get())


def test_match_cast_errors():
    x = R.Var("x", T((2,)))
    bb = R.BlockBuilder()
    with bb.function("f", [x]):
        with pytest.raises(TypeInferenceError, match="can never succeed"):
            bb.match_cast(x, R.ShapeStructInfo(ndim=1))
        with pytest.raises(TypeInferenceError, match="expects a StructInfo"):
            bb.match_cast(x, (2,))
        bb.emit_func_output(x)


def test_calls_to_module_functions_infer_from_callee():
    n = tir.Var("n", "int64")
    p = R.Var("p", T((n, 2)))
    bb = R.BlockBuilder()
    with bb.function("double", [p]):
        bb.emit_func_output(bb.emit(R.op.add(p, p)))
    x = R.Var("x", T((8, 2)))
    with bb.function("main", [x]):
        out = bb.emit(R.Call(bb.get().get_global_var("double"), [x]))
        bb.emit_func_output(out)
    assert repr(out.struct_info) == 'R.Tensor((8, 2), dtype="float32")'
    with bb.function("bad", [x]):
        with pytest.raises(TypeInferenceError, match="not a function of the module"):
            bb.emit(R.Call(GlobalVar("nope"), [x]))
        with pytest.raises(TypeInferenceError, match="with 2 argument"):
            bb.emit(R.Call(bb.get().get_global_var("double"), [x, x]))
        with pytest.raises(TypeInferenceError, match="argument 0 expects"):
            bb.emit(R.Call(bb.get().get_global_var("double"), [R.const([1, 2])]))
        bb.emit_func_output(x)


def test_if_normalization():
    x = R.Var("x", T((2,)))
    c = R.Var("c", R.PrimStructInfo("bool"))
    bb = R.BlockBuilder()
    with bb.function("f", [c, x]):
        out = bb.emit(R.If(c, R.op.nn.relu(x), R.op.add(x, x)))
        bb.emit_func_output(out)
    value = bb.lookup_binding(out)
    assert isinstance(value.true_branch, R.SeqExpr) and len(value.true_branch.blocks) == 1
    assert repr(out.struct_info) == 'R.Tensor((2,), dtype="float32")'
    with bb.function("g", [c, x]):
        with pytest.raises(TypeInferenceError, match="boolean scalar condition"):
            bb.emit(R.If(x, x, x))
        bb.emit_func_output(x)
    assert R.analysis.well_formed(bb.get())


def test_add_func_deduplicates_and_names_uniquely():
    x = R.Var("x", T((2,)))
    body = R.SeqExpr([], x)
    R.set_struct_info(body, x.struct_info)
    f = R.Function([x], body)
    g = R.Function([R.Var("y", T((3,)))], R.BlockBuilder().normalize(R.SeqExpr([], R.const([1.0]))))
    bb = R.BlockBuilder(IRModule({"f": f}))
    assert bb.add_func(f, "other").name_hint == "f"
    gv = bb.add_func(g, "f")
    assert gv.name_hint == "f1" and bb.get()[gv] is g
    bb.update_func(gv, f)
    assert bb.get()["f1"] is f


def test_builder_copies_the_given_module():
    mod = IRModule()
    bb = R.BlockBuilder(mod)
    x = R.Var("x", T((2,)))
    with bb.function("f", [x]):
        bb.emit_func_output(x)
    assert "f" in bb.get() and "f" not in mod


def test_misuse_errors():
    x = R.Var("x", T((2,)))
    bb = R.BlockBuilder()
    with pytest.raises(R.BlockBuilderError, match="emit outside a function"):
        bb.emit(R.op.nn.relu(x))
    with pytest.raises(R.BlockBuilderError, match="must be used inside"):
        with bb.dataflow():
            pass
    with pytest.raises(R.BlockBuilderError, match="emit_func_output outside"):
        bb.emit_func_output(x)
    with pytest.raises(R.BlockBuilderError, match="ended without bb.emit_func_output"):
        with bb.function("f", [x]):
            bb.emit(R.op.nn.relu(x))
    with bb.function("g", [x]):
        with pytest.raises(R.BlockBuilderError, match="inside function 'g'"):
            with bb.function("h", [x]):
                pass
        with pytest.raises(R.BlockBuilderError, match="only valid inside `with bb.dataflow"):
            bb.emit_output(x)
        with bb.dataflow():
            with pytest.raises(R.BlockBuilderError, match="cannot be nested"):
                with bb.dataflow():
                    pass
            with pytest.raises(R.BlockBuilderError, match="after the dataflow block ends"):
                bb.emit_func_output(x)
            bb.emit_output(x)
        bb.emit_func_output(x)
        with pytest.raises(R.BlockBuilderError, match="emit_func_output called twice for function 'g'"):
            bb.emit_func_output(x)
    with pytest.raises(R.BlockBuilderError, match="already has a function named 'g'"):
        with bb.function("g", [x]):
            bb.emit_func_output(x)
    with pytest.raises(R.BlockBuilderError, match="has no params"):
        with bb.function("k"):
            bb.emit_func_output(x)
    with pytest.raises(R.BlockBuilderError, match="params both"):
        with bb.function("k2", [x]):
            bb.emit_func_output(x, params=[x])


def test_dataflow_var_escaping_its_block():
    x = R.Var("x", T((2,)))
    bb = R.BlockBuilder()
    with pytest.raises(R.BlockBuilderError, match="dataflow var 'lv' escapes its dataflow block: used in "
                                                  "the output of function 'f'"):
        with bb.function("f", [x]):
            with bb.dataflow():
                lv = bb.emit(R.op.nn.relu(x))
            bb.emit_func_output(lv)
    with pytest.raises(R.BlockBuilderError, match="'lv' escapes .* used in a binding outside"):
        with bb.function("f2", [x]):
            with bb.dataflow():
                lv = bb.emit(R.op.nn.relu(x))
            bb.emit(R.op.add(lv, x))
    with pytest.raises(R.BlockBuilderError, match="used in another dataflow block"):
        with bb.function("f3", [x]):
            with bb.dataflow():
                lv = bb.emit(R.op.nn.relu(x))
                bb.emit_output(x)
            with bb.dataflow():
                bb.emit(R.op.add(lv, x))


def test_normalize_errors():
    bb = R.BlockBuilder()
    with pytest.raises(TypeInferenceError, match="emit outside a function"):
        x = R.Var("x", T((2,)))
        bb.normalize(R.op.add(R.op.nn.relu(x), x))
    with pytest.raises(TypeInferenceError, match="has no struct info; give Vars one"):
        bb.normalize(R.op.nn.relu(R.Var("v")))
    with pytest.raises(TypeInferenceError, match="not a Relax expression"):
        bb.normalize(3)


def test_low_level_block_api():
    x = R.Var("x", T((2,)))
    bb = R.BlockBuilder()
    bb.begin_scope()
    bb.begin_dataflow_block()
    assert bb.current_block_is_dataflow()
    with pytest.raises(R.BlockBuilderError, match="already open"):
        bb.begin_binding_block()
    lv = bb.emit(R.op.nn.relu(x))
    block = bb.end_block()
    assert isinstance(block, R.DataflowBlock) and block.bindings[0].var is lv
    with pytest.raises(R.BlockBuilderError, match="without an open block"):
        bb.end_block()
    assert bb.end_scope() == [block]


def test_calls_to_function_vars_and_extern_funcs():
    x = R.Var("x", T((2,)))
    fv = R.Var("f", R.FuncStructInfo([T((2,))], T((2,), "int32")))
    bb = R.BlockBuilder()
    with bb.function("main", [x, fv]):
        a = bb.emit(R.Call(fv, [x]))
        b = bb.emit(R.Call(R.ExternFunc("my_kernel"), [x], sinfo_args=[T((3,))]))
        c = bb.emit(R.Call(R.ExternFunc("opaque"), [x]))
        with pytest.raises(TypeInferenceError, match="which is not a function"):
            bb.emit(R.Call(x, [x]))
        bb.emit_func_output(a)
    assert repr(a.struct_info) == 'R.Tensor((2,), dtype="int32")'
    assert repr(b.struct_info) == 'R.Tensor((3,), dtype="float32")'
    assert isinstance(c.struct_info, R.ObjectStructInfo)
