"""Golden-text tests of the script printer."""

import textwrap

from graphc import tir
from graphc.script import expr_text, script, show
from graphc.script import ir as I
from graphc.script import tir as T
from graphc.script.printer.highlight import highlight, strip_ansi


def golden(text: str) -> str:
    return textwrap.dedent(text).strip("\n")


def test_vector_add_module_golden():
    @I.ir_module
    class MyModule:
        @T.prim_func
        def main(A: T.Buffer((128,), "float32"), B: T.Buffer((128,), "float32"),
                 C: T.Buffer((128,), "float32")):
            T.func_attr({"global_symbol": "main", "tir.noalias": True})
            for i in range(128):
                with T.block("C"):
                    vi = T.axis.spatial(128, i)
                    C[vi] = A[vi] + B[vi]

    assert MyModule.script() == golden('''
        # from graphc.script import ir as I
        # from graphc.script import tir as T

        @I.ir_module
        class Module:
            @T.prim_func
            def main(A: T.Buffer((128,), "float32"), B: T.Buffer((128,), "float32"), C: T.Buffer((128,), "float32")):
                T.func_attr({"tir.noalias": True})
                # with T.block("root"):
                for i in range(128):
                    with T.block("C"):
                        vi = T.axis.spatial(128, i)
                        T.reads(A[vi], B[vi])
                        T.writes(C[vi])
                        C[vi] = A[vi] + B[vi]
    ''')


def test_prim_func_alone_with_grid_remap_and_init():
    @T.prim_func
    def mm(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4, 4), "float32"), C: T.Buffer((4, 4), "float32")):
        for i, j, k in T.grid(4, 4, 4):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]

    assert mm.script() == golden('''
        # from graphc.script import tir as T

        @T.prim_func
        def mm(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4, 4), "float32"), C: T.Buffer((4, 4), "float32")):
            # with T.block("root"):
            for i, j, k in T.grid(4, 4, 4):
                with T.block("C"):
                    vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                    T.reads(A[vi, vk], B[vk, vj])
                    T.writes(C[vi, vj])
                    with T.init():
                        C[vi, vj] = T.float32(0.0)
                    C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
    ''')


def test_symbolic_shapes_use_handles_and_declarations():
    n = tir.SizeVar("n")
    A = tir.decl_buffer((n,), "float32", "A")
    a = tir.Var("A", "handle")
    i = tir.Var("i")
    body = tir.For(i, tir.const(0), n, tir.ForKind.SERIAL, tir.BufferStore(A, tir.const(0.0), (i,)))
    f = tir.PrimFunc([a], body, buffer_map={a: A})
    assert f.script() == golden('''
        # from graphc.script import tir as T

        @T.prim_func(private=True)
        def main(var_A: T.handle):
            n = T.int32(is_size_var=True)
            A = T.match_buffer(var_A, (n,), "float32")
            for i in range(n):
                A[i] = T.float32(0.0)
    ''')


def test_lowered_views_allocate_and_let():
    A = tir.decl_buffer((4, 4), "float32", "A")
    flat = tir.decl_buffer((16,), "float32", "A", data=A.data)
    a = tir.Var("a", "handle")
    tmp = tir.Var("tmp", "handle", "float32")
    tmp_buf = tir.decl_buffer((4,), "float32", "tmp", data=tmp, scope="local")
    i, x = tir.Var("i"), tir.Var("x", "float32")
    store = tir.BufferStore(tmp_buf, x, (0,))
    body = tir.For(i, tir.const(1), tir.const(3), tir.ForKind.VECTORIZED,
                   tir.Allocate(tmp, "float32", (tir.const(4),), tir.const(True),
                                tir.LetStmt(x, flat[i], store), "local"))
    f = tir.PrimFunc([a], body, buffer_map={a: A}, attrs={"global_symbol": "f"})
    assert f.script() == golden('''
        # from graphc.script import tir as T

        @T.prim_func
        def f(A: T.Buffer((4, 4), "float32")):
            A_1 = T.Buffer((16,), "float32", data=A.data)
            for i in T.vectorized(1, 4):
                tmp = T.allocate([4], "float32", "local")
                tmp_1 = T.Buffer((4,), "float32", data=tmp, scope="local")
                x: T.float32 = A_1[i]
                tmp_1[0] = x
    ''')


def test_constants_print_with_their_types():
    assert expr_text(tir.const(1.0)) == "T.float32(1.0)"
    assert expr_text(tir.const(3)) == "3"
    assert expr_text(tir.const(-3)) == "-3"
    assert expr_text(tir.const(4, "int64")) == "T.int64(4)"
    assert expr_text(tir.const(2, "uint8")) == "T.uint8(2)"
    assert expr_text(tir.const(True)) == "T.bool(True)"
    assert expr_text(tir.const(0.5, "float16")) == "T.float16(0.5)"
    assert expr_text(tir.const(float("-inf"))) == 'T.float32("-inf")'


def test_operator_precedence_and_division_spelling():
    i, j = tir.Var("i"), tir.Var("j")
    assert expr_text(i - (j - 1)) == "i - (j - 1)"
    assert expr_text((i - j) - 1) == "i - j - 1"
    assert expr_text((i + j) // (j * 2)) == "(i + j) // (j * 2)"
    assert expr_text((i + j) % 4) == "(i + j) % 4"
    assert expr_text(tir.truncdiv(i, j)) == "T.truncdiv(i, j)"
    assert expr_text(tir.truncmod(i, 3)) == "T.truncmod(i, 3)"
    x = tir.Var("x", "float32")
    assert expr_text(x / (x + 1.0)) == "x / (x + T.float32(1.0))"
    both = tir.convert(i < j) & tir.convert(j < 3)
    assert expr_text(both | tir.convert(i == 0)) == "i < j and j < 3 or i == 0"
    assert expr_text(~tir.convert(i < j)) == "not i < j"


def test_nodes_their_operators_would_fold_print_as_constructors():
    zero, seven = tir.const(0), tir.const(7)
    assert expr_text(tir.Add(zero, seven, "int32")) == "T.Add(0, 7)"
    lt = tir.LT(zero, seven, "bool")
    assert expr_text(tir.And(lt, tir.Not(tir.LT(seven, zero, "bool"), "bool"), "bool")) == \
        "T.LT(0, 7) and not T.LT(7, 0)"  # the comparisons are nodes: `and`, `not` keep them
    assert expr_text(tir.Select(tir.LT(zero, zero, "bool"), zero, zero, "int32")) == \
        "T.Select(T.LT(0, 0), 0, 0)"
    i, x = tir.Var("i"), tir.Var("x", "float32")
    assert expr_text(tir.Mul(i, tir.const(1), "int32")) == "T.Mul(i, 1)"  # `i * 1` is `i`
    assert expr_text(tir.And(tir.const(True), lt, "bool")) == "T.And(T.bool(True), T.LT(0, 7))"
    assert expr_text(tir.Not(tir.Not(lt, "bool"), "bool")) == "T.Not(not T.LT(0, 7))"
    assert expr_text(tir.FloorDiv(x, x, "float32")) == "T.FloorDiv(x, x)"  # `x // x` is floor(x / x)
    assert expr_text(tir.Div(i, zero, "int32")) == "T.Div(i, 0)"
    # What the builders make prints with operators, as before.
    assert expr_text(i * 2 + 1) == "i * 2 + 1"
    assert expr_text(tir.min(i, 3) < tir.truncdiv(i, 2)) == "T.min(i, 3) < T.truncdiv(i, 2)"
    assert expr_text(tir.Add(i, seven, "int32")) == "i + 7"


def test_unique_names_for_distinct_vars_with_the_same_name():
    i1, i2 = tir.Var("i"), tir.Var("i")
    A = tir.decl_buffer((4, 4), "float32", "A")
    a = tir.Var("a", "handle")
    inner = tir.For(i2, tir.const(0), tir.const(4), tir.ForKind.PARALLEL,
                    tir.BufferStore(A, tir.const(1.0), (i1, i2)))
    f = tir.PrimFunc([a], tir.For(i1, tir.const(0), tir.const(4), tir.ForKind.SERIAL, inner),
                     buffer_map={a: A}, attrs={"global_symbol": "main"})
    text = f.script()
    assert "for i in range(4):" in text
    assert "for i_1 in T.parallel(4):" in text
    assert "A[i, i_1] = T.float32(1.0)" in text


def test_thread_binding_and_where():
    A = tir.decl_buffer((8,), "float32", "A")
    i = tir.Var("i")
    binding = tir.IterVar(None, tir.Var("iter"), tir.IterType.THREAD_INDEX, "threadIdx.x")
    vi = tir.Var("vi")
    block = tir.Block((tir.IterVar(tir.Range(tir.const(0), tir.const(8)), vi),), (), (), "B",
                      tir.BufferStore(A, tir.const(0.0), (vi,)))
    realize = tir.BlockRealize((i,), tir.convert(i < 7), block)
    loop = tir.For(i, tir.const(0), tir.const(8), tir.ForKind.THREAD_BINDING, realize, binding)
    text = script(loop)
    assert text == golden('''
        for i in T.thread_binding(8, thread="threadIdx.x"):
            with T.block("B"):
                vi = T.axis.spatial(8, i)
                T.where(i < 7)
                T.reads()
                T.writes()
                A[vi] = T.float32(0.0)
    ''')


def test_script_of_buffers_exprs_and_calls():
    A = tir.decl_buffer((2, 3), "int8", "A", scope="shared")
    assert script(A) == 'T.Buffer((2, 3), "int8", scope="shared")'
    x = tir.Var("x", "float32")
    assert repr(tir.exp(x) + tir.sigmoid(x)) == "T.exp(x) + T.sigmoid(x)"
    expected = "T.if_then_else(x > T.float32(0.0), x, T.float32(0.0))"
    assert expr_text(tir.if_then_else(x > 0.0, x, 0.0)) == expected
    assert expr_text(tir.Call("float16", "tir.exp", (x,))) == 'T.call_intrin("float16", "tir.exp", x)'
    assert expr_text(tir.Call("int32", "my.op", (x,))) == 'T.call_node("int32", "my.op", x)'
    assert expr_text(tir.ramp(0, 1, 4)) == "T.Ramp(0, 1, 4)"


def test_show_plain_when_not_a_terminal(capsys):
    i = tir.Var("i")
    show(i + 1)
    assert capsys.readouterr().out == "i + 1\n"


def test_show_highlights_on_a_terminal(monkeypatch, capsys):
    import sys

    monkeypatch.setattr(sys.stdout, "isatty", lambda: True, raising=False)
    f = tir.PrimFunc([], tir.Evaluate(0), attrs={"global_symbol": "main"})
    show(f)
    out = capsys.readouterr().out
    assert "\033[" in out
    assert strip_ansi(out) == f.script() + "\n"


def test_highlight_round_trips_text():
    text = 'for i in T.grid(4, 4):  # loop\n    A[i] = T.float32(1.0)'
    assert strip_ansi(highlight(text)) == text
