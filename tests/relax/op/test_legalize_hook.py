"""The legalize hook's contract: `legalize(bb, call) -> Expr`, typically through bb.call_te."""

from graphc import relax, te

R = relax


def _infer(call, bb):
    return call.args[0].struct_info


def _legalize(bb, call):
    return bb.call_te(lambda a: te.compute(a.shape, lambda *i: a(*i) * 2.0, name="double"), call.args[0])


DOUBLE = R.op.register_op("test.double", 1, _infer, legalize=_legalize, pattern=R.OpPatternKind.kElemWise)


class Legalize(R.ExprMutator):
    """A miniature LegalizeOps: replace every call that has a legalization by its result."""

    def visit_Call(self, call):
        call = super().visit_Call(call)
        legalize = call.op.get_attr("FLegalize") if isinstance(call.op, R.Op) else None
        return legalize(self.builder, call) if legalize is not None else call


def test_legalize_through_a_mutator():
    x = R.Var("x", R.TensorStructInfo((4,), "float32"))
    bb = R.BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            gv = bb.emit_output(R.op.nn.relu(R.Call(DOUBLE, [x])))
        bb.emit_func_output(gv)
    mutator = Legalize(bb.get())
    main = mutator.visit_expr(bb.get()["main"])
    mutator.builder.update_func(bb.get().get_global_var("main"), main)
    mod = mutator.builder.get()
    first = mod["main"].body.blocks[0].bindings[0]
    assert first.value.op.name == "relax.call_tir" and first.value.args[0].name_hint == "double"
    assert "double" in mod and R.analysis.well_formed(mod)
