"""ExprVisitor hooks and ExprMutator copy-on-write with re-normalization."""

import pytest

from graphc import relax, tir
from graphc.ir import structural_equal

R = relax


def T(shape, dtype="float32"):
    return R.TensorStructInfo(shape, dtype)


def build(with_if=False):
    x = R.Var("x", T((2, 3)))
    c = R.Var("c", R.PrimStructInfo("bool"))
    bb = R.BlockBuilder()
    with bb.function("main", [x, c] if with_if else [x]):
        with bb.dataflow():
            lv = bb.emit(R.op.nn.relu(x))
            lv1 = bb.emit(R.op.permute_dims(lv))
            gv = bb.emit_output(R.op.add(lv1, R.const(1.0)))
        out = bb.emit(R.If(c, R.op.nn.relu(gv), gv)) if with_if else gv
        bb.emit_func_output(out)
    return bb.get()["main"]


class Recorder(R.ExprVisitor):
    def __init__(self):
        self.events = []

    def visit_Call(self, call):
        self.events.append(("call", call.op.name if isinstance(call.op, R.Op) else call.op))
        super().visit_Call(call)

    def visit_var_def(self, var):
        self.events.append(("def", var.name_hint))

    def visit_dataflow_block(self, block):
        self.events.append(("dataflow", len(block.bindings)))
        super().visit_dataflow_block(block)

    def visit_Constant(self, const):
        self.events.append(("const", const.data.numpy().item()))


def test_visitor_hooks_in_order():
    r = Recorder()
    r.visit_expr(build())
    assert r.events == [
        ("def", "x"), ("dataflow", 3), ("call", "relax.nn.relu"), ("def", "lv"),
        ("call", "relax.permute_dims"),
        ("def", "lv1"), ("call", "relax.add"), ("const", 1.0), ("def", "gv")]


def test_visitor_sees_prim_exprs_and_if():
    n = tir.Var("n", "int64")
    seen = []

    class Prims(R.ExprVisitor):
        def visit_prim_expr(self, e):
            seen.append(e)

    x = R.Var("x", T((n,)))
    bb = R.BlockBuilder()
    with bb.function("f", [x]):
        y = bb.emit(R.op.reshape(x, R.ShapeExpr((n,))))
        c = bb.emit(R.PrimValue(tir.IntImm("bool", 1)))
        z = bb.emit(R.If(c, y, x))
        bb.emit_func_output(z)
    Prims().visit_expr(bb.get()["f"])
    assert seen[0] is n and len(seen) == 2


def test_identity_mutator_returns_same_objects():
    f = build()
    assert R.ExprMutator().visit_expr(f) is f
    g = build(with_if=True)
    assert R.ExprMutator().visit_expr(g) is g


class ReluToAbsPlus(R.ExprMutator):
    """relu(x) -> x + x: a rewrite that keeps struct info."""

    def visit_Call(self, call):
        call = super().visit_Call(call)
        if isinstance(call.op, R.Op) and call.op.name == "relax.nn.relu":
            return R.op.add(call.args[0], call.args[0])
        return call


def test_mutator_rewrites_only_what_changed():
    f = build()
    g = ReluToAbsPlus().visit_expr(f)
    assert g is not f and g.params == f.params
    old, new = f.body.blocks[0].bindings, g.body.blocks[0].bindings
    assert str(new[0].value) == "R.add(x, x)" and new[0].var is old[0].var  # same struct info: var kept
    assert new[1] is old[1] and new[2] is old[2]  # untouched bindings are the same objects
    assert R.analysis.well_formed(g)


class PermuteToReshape(R.ExprMutator):
    """permute_dims(x) -> reshape(x, (3, 2)) wrapped in relu: changes the value, keeps struct info."""

    def visit_Call(self, call):
        call = super().visit_Call(call)
        if isinstance(call.op, R.Op) and call.op.name == "relax.permute_dims":
            return R.op.nn.relu(R.op.reshape(call.args[0], (3, 2)))
        return call


def test_mutator_renormalizes_nested_rewrites():
    g = PermuteToReshape().visit_expr(build())
    bindings = g.body.blocks[0].bindings
    assert [str(b.value) for b in bindings][:2] == ["R.nn.relu(x)", "R.reshape(lv, R.shape([3, 2]))"]
    assert bindings[2].value.op.name == "relax.nn.relu" and bindings[2].value.args[0] is bindings[1].var
    assert isinstance(bindings[1].var, R.DataflowVar) and len(bindings) == 4
    assert R.analysis.well_formed(g)


class DropTranspose(R.ExprMutator):
    """permute_dims(x) -> x: changes struct info, so the bound var is replaced and uses remapped."""

    def visit_Call(self, call):
        call = super().visit_Call(call)
        if isinstance(call.op, R.Op) and call.op.name == "relax.permute_dims":
            return call.args[0]
        return call


def test_mutator_replaces_vars_whose_struct_info_changes():
    f = build()
    g = DropTranspose().visit_expr(f)
    bindings = g.body.blocks[0].bindings
    assert bindings[1].var is not f.body.blocks[0].bindings[1].var
    assert repr(bindings[1].var.struct_info) == 'R.Tensor((2, 3), dtype="float32")'
    assert bindings[2].value.args[0] is bindings[1].var
    assert repr(g.ret_struct_info) == 'R.Tensor((2, 3), dtype="float32")'
    assert R.analysis.well_formed(g)


def test_mutator_result_equals_an_independent_build():
    g = ReluToAbsPlus().visit_expr(build())
    x = R.Var("x", T((2, 3)))
    bb = R.BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            lv = bb.emit(R.op.add(x, x))
            lv1 = bb.emit(R.op.permute_dims(lv))
            gv = bb.emit_output(R.op.add(lv1, R.const(1.0)))
        bb.emit_func_output(gv)
    assert structural_equal(g, bb.get()["main"])


def test_mutator_visit_var_def_hook_renames_params():
    f = build()

    class Rename(R.ExprMutator):
        def visit_var_def(self, var):
            if var.name_hint == "x" and var not in self.var_remap:
                self.var_remap[var] = R.Var("input", var.struct_info)
            return super().visit_var_def(var)

    g = Rename().visit_expr(f)
    assert g.params[0].name_hint == "input"
    assert g.body.blocks[0].bindings[0].value.args[0] is g.params[0]
    assert R.analysis.well_formed(g)

_IF_SOURCE = '''
# from graphc.script import relax as R
@R.function
def main(c: R.Tensor((), "bool"), x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
    if c:
        y = R.add(x, x)
        r = y
    else:
        r = x
    return r
'''

def test_error_inside_a_nested_scope_surfaces_unchanged():
    from graphc.script import from_source

    func = from_source(_IF_SOURCE)

    class Boom(relax.ExprMutator):
        def visit_Call(self, op):
            raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        Boom().visit_expr(func)

