"""well_formed: accepts what the BlockBuilder builds, catches each kind of violation."""

import pytest

from graphc import relax, tir
from graphc.errors import VerifyError
from graphc.ir import GlobalVar, IRModule
from graphc.relax.analysis import WellFormedChecker, verify_well_formed, well_formed

R = relax


def T(shape, dtype="float32"):
    return R.TensorStructInfo(shape, dtype)


def func(params, blocks, body, ret=None):
    """A Function built by hand (no BlockBuilder checks), struct info set where the builder would."""
    seq = R.SeqExpr(blocks, body)
    if body.struct_info_ is not None:
        R.set_struct_info(seq, body.struct_info)
    return R.Function(params, seq, ret or body.struct_info_ or T((2,)))


def errors(obj):
    return WellFormedChecker().check(obj)


def normalized(call):
    return R.BlockBuilder().normalize(call)


x = R.Var("x", T((2,)))


def test_builder_output_is_well_formed():
    n = tir.Var("n", "int64")
    p = R.Var("p", T((n, 2)))
    bb = R.BlockBuilder()
    with bb.function("main", [p]):
        with bb.dataflow():
            lv = bb.emit(R.op.add(p, p))
            gv = bb.emit_output(R.op.reshape(lv, (n * 2,)))
        bb.emit_func_output(gv)
    assert well_formed(bb.get()) and well_formed(bb.get()["main"])
    verify_well_formed(bb.get())


def test_dataflow_var_used_outside_its_block():
    lv = R.DataflowVar("lv", T((2,)))
    f = func([x], [R.DataflowBlock([R.VarBinding(lv, normalized(R.op.nn.relu(x)))])], lv)
    assert not well_formed(f)
    assert errors(f) == ["dataflow var 'lv' used outside its dataflow block (in the body of a SeqExpr)"]


def test_dataflow_var_bound_outside_a_dataflow_block():
    lv = R.DataflowVar("lv", T((2,)))
    f = func([x], [R.BindingBlock([R.VarBinding(lv, x)])], x)
    assert errors(f) == ["dataflow var 'lv' is bound outside a dataflow block"]


def test_undefined_var():
    y = R.Var("y", T((2,)))
    gv = R.Var("gv", T((2,)))
    f = func([x], [R.BindingBlock([R.VarBinding(gv, normalized(R.op.add(x, y)))])], gv)
    assert errors(f) == ["var 'y' is used before it is defined (in R.add(x, y))"]


def test_var_defined_twice():
    gv = R.Var("gv", T((2,)))
    f = func([x], [R.BindingBlock([R.VarBinding(gv, x), R.VarBinding(gv, x)])], gv)
    assert errors(f) == ["var 'gv' is defined more than once"]


def test_non_normalized_call():
    gv = R.Var("gv", T((2,)))
    nested = R.op.add(R.op.nn.relu(x), x)
    R.set_struct_info(nested, T((2,)))
    f = func([x], [R.BindingBlock([R.VarBinding(gv, nested)])], gv)
    errs = errors(f)
    assert any("is not in A-normal form: argument Call R.nn.relu(x) must be bound to a var first" in e
               for e in errs)
    assert any("Call R.nn.relu(x) has no struct info" in e for e in errs)


def test_missing_struct_info():
    gv = R.Var("gv", T((2,)))
    f = func([x], [R.BindingBlock([R.VarBinding(gv, R.op.nn.relu(x))])], gv)
    assert errors(f) == ["Call R.nn.relu(x) has no struct info"]
    assert well_formed(f, check_struct_info=False)
    untyped = R.Var("u")
    g = func([x], [R.BindingBlock([R.VarBinding(untyped, x)])], x)
    assert "var 'u' has no struct info" in errors(g)


def test_symbolic_var_used_before_definition():
    n, m = tir.Var("n", "int64"), tir.Var("m", "int64")
    p = R.Var("p", T((n * 2,)))  # a compound dimension uses n, it does not define it
    f = func([p], [], p)
    assert errors(f)[0].startswith("symbolic var 'n' is used in parameter 'p' before it is defined")
    q = R.Var("q", T((n,)))
    lv = R.Var("lv", T((m,)))
    g = func([q], [R.BindingBlock([R.VarBinding(lv, q)])], q)
    assert "symbolic var 'm' is used in the struct info of 'lv' before it is defined" in errors(g)[0]
    mc = R.Var("mc", T((m,)))
    h = func([q], [R.BindingBlock([R.MatchCast(mc, q, T((m,)))])], mc, ret=T((n,)))
    assert well_formed(h)  # match_cast defines m
    s = R.ShapeExpr((m,))
    k = func([q], [], s, ret=R.ShapeStructInfo(ndim=1))
    assert errors(k) == ["symbolic var 'm' is used in a shape or scalar value before it is defined "
                         "(define it as a bare dimension of a parameter or with match_cast)"]


def test_if_inside_dataflow_block():
    c = R.Var("c", R.PrimStructInfo("bool"))
    branch = R.BlockBuilder().normalize(R.SeqExpr([], x))
    cond = R.If(c, branch, branch)
    R.set_struct_info(cond, T((2,)))
    lv = R.Var("lv", T((2,)))
    f = func([c, x], [R.DataflowBlock([R.VarBinding(lv, cond)])], lv)
    assert errors(f) == ["dataflow block binds 'lv' to an If; control flow is not allowed in dataflow blocks"]


def test_seq_body_must_be_a_leaf():
    call = normalized(R.op.nn.relu(x))
    f = func([x], [], call)
    assert errors(f) == ["the body of a SeqExpr must be a leaf or a tuple of leaves, got R.nn.relu(x)"]


def test_undefined_global_var_in_module():
    gv = R.Var("gv", T((2,)))
    call = R.op.call_tir(GlobalVar("missing"), [x], T((2,)))
    R.set_struct_info(call, T((2,)))
    f = func([x], [R.BindingBlock([R.VarBinding(gv, call)])], gv)
    assert well_formed(f)  # a lone function cannot tell
    mod = IRModule({"main": f})
    assert errors(mod) == ["GlobalVar 'missing' names no function of the module in function 'main'"]
    with pytest.raises(VerifyError, match="GlobalVar 'missing'"):
        verify_well_formed(mod)


def test_vars_in_inner_scopes_do_not_leak():
    c = R.Var("c", R.PrimStructInfo("bool"))
    inner = R.Var("inner", T((2,)))
    branch = R.SeqExpr([R.BindingBlock([R.VarBinding(inner, x)])], inner)
    R.set_struct_info(branch, T((2,)))
    cond = R.If(c, branch, branch)
    R.set_struct_info(cond, T((2,)))
    out = R.Var("out", T((2,)))
    z = R.Var("z", T((2,)))
    f = func([c, x], [R.BindingBlock([R.VarBinding(out, cond), R.VarBinding(z, inner)])], out)
    errs = errors(f)
    assert "var 'inner' is defined more than once" in errs
    assert "var 'inner' is used before it is defined (in the binding of 'z')" in errs


def test_dataflow_var_used_in_a_later_dataflow_block():
    lv = R.DataflowVar("lv", T((2,)))
    lv2 = R.DataflowVar("lv2", T((2,)))
    gv = R.Var("gv", T((2,)))
    blocks = [R.DataflowBlock([R.VarBinding(lv, x), R.VarBinding(gv, x)]),
              R.DataflowBlock([R.VarBinding(lv2, lv)])]
    f = func([x], blocks, gv)
    assert errors(f) == ["dataflow var 'lv' used outside its dataflow block (in the binding of 'lv2')"]
