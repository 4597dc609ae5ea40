"""Structural equality and hashing with variables compared by binding."""

from graphc import tir
from graphc.ir import structural_equal, structural_hash


def _func(name_a="A", loop="i"):
    A = tir.decl_buffer((8,), "float32", name_a)
    a = tir.Var(name_a.lower(), "handle")
    i = tir.Var(loop)
    body = tir.For(i, tir.const(0), tir.const(8), tir.ForKind.SERIAL, tir.BufferStore(A, A[i] + 1.0, (i,)))
    return tir.PrimFunc([a], body, buffer_map={a: A})


def test_names_do_not_matter():
    f, g = _func("A", "i"), _func("B", "k")
    assert structural_equal(f, g)
    assert structural_hash(f) == structural_hash(g)


def test_bindings_must_be_consistent():
    i, j = tir.Var("i"), tir.Var("j")
    assert not structural_equal(i + j, i + i)
    assert structural_equal(i + j, j + i)  # i<->j is a consistent renaming
    assert not structural_equal(i + i, i + j)


def test_constants_and_dtypes_matter():
    i = tir.Var("i")
    assert not structural_equal(i + 1, i + 2)
    assert not structural_equal(tir.Var("x", "int64"), tir.Var("x", "int32"))
    assert structural_hash(i + 1) != structural_hash(i + 2)


def test_loop_kind_and_extent_matter():
    f = _func()
    g = f.with_body(f.body.replace(kind=tir.ForKind.PARALLEL))
    h = f.with_body(f.body.replace(extent=tir.const(4)))
    assert not structural_equal(f, g) and not structural_equal(f, h)


def test_attrs_matter():
    f = _func()
    assert not structural_equal(f, f.with_attr("global_symbol", "main"))


def test_module_functions_are_compared_each_with_its_own_bindings():
    from graphc.ir import IRModule

    n = tir.Var("n")
    shared = IRModule({"f": tir.PrimFunc([n], tir.Evaluate(n)), "g": tir.PrimFunc([n], tir.Evaluate(n))})
    m1, m2 = tir.Var("n"), tir.Var("n")
    separate = IRModule(
        {"f": tir.PrimFunc([m1], tir.Evaluate(m1)), "g": tir.PrimFunc([m2], tir.Evaluate(m2))}
    )
    assert structural_equal(shared, separate)
    assert structural_hash(shared) == structural_hash(separate)


def test_number_attributes_compare_and_hash_by_value():
    f = _func()
    by_int = f.with_attr("attr", 10)
    by_imm = f.with_attr("attr", tir.IntImm("int32", 10))
    assert structural_equal(by_int, by_imm) and structural_equal(by_imm, by_int)
    assert structural_hash(by_int) == structural_hash(by_imm)
    assert structural_equal(f.with_attr("Primitive", 1), f.with_attr("Primitive", True))
    assert structural_hash(f.with_attr("Primitive", 1)) == structural_hash(f.with_attr("Primitive", True))
    assert structural_hash(f.with_attr("x", 2)) == structural_hash(f.with_attr("x", 2.0))
    assert structural_equal(f.with_attr("x", tir.FloatImm("float32", 0.5)), f.with_attr("x", 0.5))
    assert not structural_equal(by_int, f.with_attr("attr", tir.IntImm("int32", 11)))
    # Between immediates the dtype still matters.
    assert not structural_equal(tir.IntImm("int32", 10), tir.IntImm("int64", 10))
    assert not structural_equal(tir.const(1.0, "float32"), tir.const(1.0, "float16"))
