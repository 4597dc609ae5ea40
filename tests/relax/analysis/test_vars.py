"""free_vars, bound_vars, all_vars, used_vars, all_global_vars, free_symbolic_vars."""

from graphc import relax, te, tir
from graphc.relax.analysis import (
    all_global_vars,
    all_vars,
    bound_vars,
    free_symbolic_vars,
    free_vars,
    used_vars,
)

R = relax


def build():
    n = tir.Var("n", "int64")
    x = R.Var("x", R.TensorStructInfo((n, 2), "float32"))
    bb = R.BlockBuilder()
    with bb.function("main", [x]):
        with bb.dataflow():
            lv = bb.emit_te(lambda a: te.compute(a.shape, lambda i, j: a[i, j] + 1.0, name="inc"), x)
            gv = bb.emit_output(R.op.nn.relu(lv))
        bb.emit_func_output(gv)
    return bb.get()["main"], n


def test_function_vars():
    f, n = build()
    assert [v.name_hint for v in bound_vars(f)] == ["x", "lv", "gv"]
    assert free_vars(f) == []
    assert [v.name_hint for v in all_vars(f)] == ["x", "lv", "gv"]
    assert [gv.name_hint for gv in all_global_vars(f)] == ["inc"]
    assert free_symbolic_vars(f) == []


def test_expression_vars():
    n = tir.Var("n", "int64")
    x = R.Var("x", R.TensorStructInfo((2,), "float32"))
    y = R.Var("y", R.TensorStructInfo((2,), "float32"))
    call = R.op.add(x, R.op.multiply(y, x))
    assert free_vars(call) == [x, y] and bound_vars(call) == []
    assert free_symbolic_vars(R.op.reshape(x, R.ShapeExpr((n,)))) == [n]


def test_used_vars_counts_reads_inside_the_expression():
    f, _ = build()
    assert [v.name_hint for v in used_vars(f)] == ["x", "lv", "gv"]
    x = R.Var("x", R.TensorStructInfo((2,), "float32"))
    y = R.Var("y", R.TensorStructInfo((2,), "float32"))
    call = R.op.add(R.op.multiply(y, x), x)
    assert used_vars(call) == [y, x]
    relu = R.Op.get("relax.nn.relu")
    nested = R.op.add(R.op.nn.relu(y), x)
    assert used_vars(nested, skip_call=lambda c: c.op is relu) == [x]
