"""uses_var, uses_any_var, used_vars: which variables TensorIR expressions and statements read."""

from graphc import tir
from graphc.tir.analysis.var_use import VarCollector, used_vars, uses_any_var, uses_var

i, j, n = tir.Var("i"), tir.Var("j"), tir.Var("n")
A = tir.decl_buffer((n,), "float32", "A")


def loop():
    """for i in range(n): A[i] = A[j] (reads j, n; defines i)."""
    return tir.For(i, tir.const(0), n, tir.ForKind.SERIAL, tir.BufferStore(A, A[j], (i,)))


def test_expressions():
    assert uses_var(i * 2 + j, j) and not uses_var(i * 2, j)
    assert uses_any_var(tir.max(i, 1), {i, j}) and not uses_any_var(tir.max(i, 1), {j})
    assert used_vars(j + i * j, i - 1) == [j, i]


def test_statements_count_reads_not_definitions():
    stmt = loop()
    assert used_vars(stmt) == [n, j, i]  # the extent, then the store's value, then its index
    assert uses_var(stmt, n)
    k = tir.Var("k")
    assert not uses_var(tir.For(k, tir.const(0), n, tir.ForKind.SERIAL, tir.Evaluate(tir.const(0))), k)


def test_let_binds_without_reading():
    x = tir.Var("x")
    let = tir.Let(x, i + 1, j, "int32")
    assert used_vars(let) == [i, j]
    assert not uses_var(let, x)


def test_buffer_shapes_are_not_reads():
    assert used_vars(A[0]) == []
    assert not uses_var(A[0], n)


def test_collector_subclass_walks_new_node_kinds():
    class Wrapped(tir.PrimExpr):
        __slots__ = ("inner",)

        def __init__(self, inner):
            self.inner = inner

    class Collect(VarCollector):
        def visit_Wrapped(self, op):
            self.visit_expr(op.inner)

    assert used_vars(Wrapped(i)) == []
    assert Collect().collect([Wrapped(i + j), j]) == [i, j]

