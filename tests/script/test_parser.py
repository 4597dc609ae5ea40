"""Parser tests: each script construct becomes the IR the conventions describe."""

import pytest

from graphc import IRModule, tir
from graphc.errors import ScriptError
from graphc.ir import structural_equal
from graphc.script import from_source
from graphc.script import ir as I
from graphc.script import tir as T

N = 8


def body_of(func):
    """The function body without the implicit root block."""
    body = func.body
    if isinstance(body, tir.BlockRealize) and body.block.name_hint == "root":
        return body.block.body
    return body


def test_ir_module_and_buffer_params():
    @I.ir_module
    class Mod:
        @T.prim_func
        def main(A: T.Buffer((N,), "float32"), B: T.Buffer[(8,), "float32"], C: T.Buffer[8, "int8"]):  # noqa: F821
            T.func_attr({"global_symbol": "main", "tir.noalias": True})
            for i in range(8):
                with T.block("C"):
                    vi = T.axis.spatial(8, i)
                    B[vi] = A[vi] + 1.0

    assert isinstance(Mod, IRModule)
    f = Mod["main"]
    assert isinstance(f, tir.PrimFunc)
    assert [p.dtype for p in f.params] == ["handle"] * 3
    A, B, C = f.buffers
    assert (A.name, A.shape[0].value, A.dtype) == ("A", 8, "float32")
    assert (C.shape[0].value, C.dtype) == (8, "int8")
    assert f.attrs == {"global_symbol": "main", "tir.noalias": True}
    root = f.body.block
    assert root.name_hint == "root" and root.reads == () and root.iter_vars == ()
    loop = root.body
    assert isinstance(loop, tir.For) and loop.kind is tir.ForKind.SERIAL and loop.extent.value == 8
    realize = loop.body
    assert realize.iter_values == (loop.loop_var,)
    block = realize.block
    (iv,) = block.iter_vars
    assert iv.iter_type is tir.IterType.DATA_PAR and iv.dom.extent.value == 8
    assert [r.buffer for r in block.reads] == [A] and [r.buffer for r in block.writes] == [B]
    store = block.body
    assert isinstance(store, tir.BufferStore) and store.buffer is B
    assert isinstance(store.value.b, tir.FloatImm) and store.value.b.dtype == "float32"


def test_handle_match_buffer_fields():
    @T.prim_func
    def f(a: T.handle, n: T.int32, k: T.int64):
        m = T.int32()
        s = T.int32()
        A = T.match_buffer(a, (m, 4), "float16", strides=(s, 1), elem_offset=2, scope="shared",
                           offset_factor=4)
        A[0, 0] = T.float16(n)

    n, k = f.params[1], f.params[2]
    assert (n.dtype, k.dtype) == ("int32", "int64")
    A = f.buffer_map[f.params[0]]
    assert A.dtype == "float16" and A.scope == "shared" and A.offset_factor == 4
    assert A.shape[0].name == "m" and A.strides[0].name == "s" and A.elem_offset.value == 2
    assert f.attrs == {"global_symbol": "f"}


def test_private_prim_func_has_no_global_symbol():
    f = from_source('''
@T.prim_func(private=True)
def g(x: T.int64):
    T.evaluate(x)
''')
    assert f.attrs == {} and f.body.value.dtype == "int64"


def test_symbolic_int64_dims_and_names_from_closure():
    extent = 6

    @T.prim_func
    def f(a: T.handle):
        n = T.int64()
        A = T.match_buffer(a, (n,), "float32")
        for i in range(extent):
            A[i] = T.float32(0)

    A = f.buffers[0]
    assert A.shape[0].dtype == "int64"
    assert body_of(f).extent.value == 6


def test_reads_writes_computed_when_omitted_and_kept_when_given():
    @T.prim_func
    def f(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4,), "float32")):
        for i, k in T.grid(4, 4):
            with T.sblock("B"):
                vi, vk = T.axis.remap("SR", [i, k])
                T.reads(A[vi, 0:4])
                with T.init():
                    B[vi] = T.float32(0)
                B[vi] = B[vi] + A[vi, vk]

    block = body_of(f).body.body.block
    assert block.init is not None
    assert [iv.iter_type for iv in block.iter_vars] == [tir.IterType.DATA_PAR, tir.IterType.COMM_REDUCE]
    (read,) = block.reads
    assert read.region[1].extent.value == 4
    assert [w.buffer.name for w in block.writes] == ["B"]


def test_axis_kinds_ranges_where_and_block_attr():
    @T.prim_func
    def f(A: T.Buffer((10,), "float32")):
        for i in T.serial(2, 9, annotations={"k": 1}):
            with T.block("b"):
                v0 = T.axis.spatial((2, 10), i)
                v1 = T.axis.scan(10, i)
                v2 = T.axis.opaque(10, i)
                T.where(i < 8)
                T.reads()
                T.writes(A[v0])
                T.block_attr({"tag": "x"})
                A[v0] = T.float32(v1 + v2)

    loop = body_of(f)
    assert loop.min.value == 2 and loop.extent.value == 7 and loop.annotations == {"k": 1}
    realize = loop.body
    assert isinstance(realize.predicate, tir.LT)
    ivs = realize.block.iter_vars
    assert ivs[0].dom.min.value == 2 and ivs[0].dom.extent.value == 8
    assert [iv.iter_type for iv in ivs] == [tir.IterType.DATA_PAR, tir.IterType.ORDERED, tir.IterType.OPAQUE]
    assert realize.block.annotations == {"tag": "x"} and realize.block.reads == ()


def test_loop_kinds_and_thread_binding():
    @T.prim_func
    def f(A: T.Buffer((64,), "float32")):
        for b in T.thread_binding(2, thread="blockIdx.x"):
            for t in T.thread_binding(0, 8, thread="threadIdx.x"):
                for p in T.parallel(2):
                    for v in T.vectorized(2):
                        for u in T.unroll(1, 3):
                            A[b * 32 + t * 4 + p * 2 + v] = T.float32(u)

    loops = []
    node = body_of(f)
    while isinstance(node, tir.For):
        loops.append(node)
        node = node.body
    kinds = [loop.kind for loop in loops]
    assert kinds == [tir.ForKind.THREAD_BINDING, tir.ForKind.THREAD_BINDING, tir.ForKind.PARALLEL,
                     tir.ForKind.VECTORIZED, tir.ForKind.UNROLLED]
    assert loops[0].thread_binding.thread_tag == "blockIdx.x"
    assert loops[0].thread_binding.iter_type is tir.IterType.THREAD_INDEX
    assert loops[4].min.value == 1 and loops[4].extent.value == 2


def test_alloc_buffer_at_top_level_goes_to_root_block():
    @T.prim_func
    def f(A: T.Buffer((4,), "float32")):
        B = T.alloc_buffer((4,), "float32", scope="local")
        for i in range(4):
            with T.block("B"):
                vi = T.axis.spatial(4, i)
                C = T.alloc_buffer((1,), "float32")
                C[0] = A[vi]
                B[vi] = C[0]

    root = f.body.block
    assert [b.name for b in root.alloc_buffers] == ["B"] and root.alloc_buffers[0].scope == "local"
    inner = root.body.body.block
    assert [b.name for b in inner.alloc_buffers] == ["C"]


def test_functions_without_blocks_have_no_root():
    @T.prim_func
    def f(A: T.Buffer((4,), "float32")):
        for i in range(4):
            A[i] = T.float32(1)

    assert isinstance(f.body, tir.For)


def test_lowered_constructs():
    @T.prim_func
    def f(A: T.Buffer((4, 4), "float32"), n: T.int32):
        A_flat = T.Buffer((16,), "float32", data=A.data)
        tx = T.launch_thread("threadIdx.x", 4)
        buf = T.allocate([4], "float32", "local")
        local = T.Buffer((4,), "float32", data=buf, scope="local")
        x: T.int32 = tx * 4
        if x < n:
            local[0] = A_flat[x]
        else:
            local[0] = T.float32(0)
        A_flat[T.Ramp(x, 1, 4)] = T.Broadcast(local[0], 4)

    attr = f.body
    assert isinstance(attr, tir.AttrStmt) and attr.attr_key == "thread_extent"
    assert attr.node.thread_tag == "threadIdx.x" and attr.node.dom.extent.value == 4
    alloc = attr.body
    assert isinstance(alloc, tir.Allocate) and alloc.scope == "local" and alloc.extents[0].value == 4
    let = alloc.body
    assert isinstance(let, tir.LetStmt) and let.var.dtype == "int32"
    branch, store = let.body.seq
    assert isinstance(branch, tir.IfThenElse) and branch.else_case is not None
    flat = store.buffer
    A = f.buffers[0]
    assert flat.data is A.data and flat.shape[0].value == 16
    assert store.value.dtype == "float32x4" and isinstance(store.indices[0], tir.Ramp)
    assert branch.then_case.buffer.data is alloc.buffer_var


def test_env_thread_decl_buffer_assert_attr_while():
    f = from_source('''
@T.prim_func
def f(A: T.Buffer((4,), "int32")):
    tx = T.env_thread("threadIdx.x")
    T.launch_thread(tx, 4)
    assert tx < 4, "bad thread"
    T.attr(A.data, "pragma", 1)
    B = T.decl_buffer((4,), "int32", data=A.data)
    while B[tx] > 0:
        B[tx] -= 1
''')
    attr = f.body
    assert attr.node.dom is None and attr.node.thread_tag == "threadIdx.x"
    check = attr.body
    assert isinstance(check, tir.AssertStmt) and check.message.value == "bad thread"
    pragma = check.body
    assert isinstance(pragma, tir.AttrStmt) and pragma.node is f.buffers[0].data
    decl = pragma.body
    assert isinstance(decl, tir.DeclBuffer) and isinstance(decl.body, tir.While)


def test_expression_forms():
    @T.prim_func
    def f(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "bool"), C: T.Buffer((4,), "int64")):
        for i in range(4):
            B[i] = 0 <= i < 3 and not i == 1 or i > 2
            A[i] = T.if_then_else(i > 0, T.max(A[i], T.float32(0)), T.min(A[i], T.float32(1)))
            A[i] = T.Select(B[i], T.Cast("float32", i), T.cast(i, "float32"))
            C[i] = T.floordiv(T.int64(i), T.int64(2)) + T.floormod(T.int64(i), 3) + T.truncdiv(i, 2)
            A[i] += T.float32(1)
            T.evaluate(T.call_extern("int32", "puts", "hi"))

    seq = body_of(f).body.seq
    cond = seq[0].value
    assert isinstance(cond, tir.Or) and isinstance(cond.a, tir.And)
    assert isinstance(cond.a.a, tir.And)  # the chain 0 <= i < 3
    assert seq[1].value.op == "tir.if_then_else"
    sel = seq[2].value
    assert isinstance(sel, tir.Select) and isinstance(sel.true_value, tir.Cast)
    assert seq[3].value.dtype == "int64"
    assert isinstance(seq[4].value, tir.Add)
    call = seq[5].value
    assert call.op == "tir.call_extern" and call.args[0].value == "puts" and call.args[1].value == "hi"


@pytest.mark.parametrize("name", ["exp", "exp2", "exp10", "log", "log2", "log10", "log1p", "expm1", "sqrt",
                                  "rsqrt", "tanh", "sigmoid", "erf", "sin", "cos", "tan", "asin", "acos",
                                  "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "floor", "ceil",
                                  "round", "nearbyint", "trunc", "fabs", "abs", "isnan", "isinf",
                                  "isfinite"])
def test_every_unary_intrinsic(name):
    dtype = "bool" if name.startswith("is") else "float32"
    f = from_source(f'''
@T.prim_func
def f(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "{dtype}")):
    for i in range(4):
        B[i] = T.{name}(A[i])
''')
    call = f.body.body.value
    assert call.op == "tir." + ("fabs" if name == "abs" else name)
    assert structural_equal(from_source(f.script()), f)


@pytest.mark.parametrize("name", ["pow", "atan2", "fmod", "hypot", "copysign", "nextafter"])
def test_every_binary_float_intrinsic(name):
    f = from_source(f'''
@T.prim_func
def f(A: T.Buffer((4,), "float32")):
    for i in range(4):
        A[i] = T.{name}(A[i], T.float32(2))
''')
    assert f.body.body.value.op == "tir." + name


@pytest.mark.parametrize("name", ["shift_left", "shift_right", "bitwise_and", "bitwise_or", "bitwise_xor"])
def test_every_integer_intrinsic(name):
    f = from_source(f'''
@T.prim_func
def f(A: T.Buffer((4,), "int32")):
    for i in range(4):
        A[i] = T.{name}(A[i], 1) + T.popcount(i) + T.bitwise_not(i)
''')
    assert f.body.body.value.a.a.op == "tir." + name


def test_typed_constants():
    f = from_source('''
@T.prim_func
def f(A: T.Buffer((1,), "float64")):
    A[0] = T.Cast("float64", T.int8(1) + T.int8(2)) + T.Cast("float64", T.uint16(3)) + T.float64(0.5) \
        + T.Cast("float64", T.float16(1)) + T.Cast("float64", T.bfloat16(2)) + T.Cast("float64", T.bool(True))
''')
    assert f.body.value.dtype == "float64"


def test_node_constructors_build_as_written():
    @T.prim_func
    def f(A: T.Buffer((4,), "int64"), B: T.Buffer((4,), "bool")):
        A[0] = T.Add(T.int64(0), 7) + T.FloorMod(T.int64(9), T.int64(1))
        B[0] = T.Or(T.LT(0, 1), T.Not(T.bool(False)))

    seq = body_of(f).seq
    add = seq[0].value.a
    assert isinstance(add, tir.Add) and add.b.dtype == "int64" and add.b.value == 7
    assert isinstance(seq[0].value.b, tir.FloorMod)
    cond = seq[1].value
    assert isinstance(cond, tir.Or) and isinstance(cond.a, tir.LT) and isinstance(cond.b, tir.Not)
    with pytest.raises(ScriptError, match="T.Sub needs operands of one dtype, got int32 and int64"):
        from_source('''
@T.prim_func
def g(A: T.Buffer((1,), "int64")):
    A[0] = T.Sub(T.int32(1), T.int64(2))
''')


def test_python_level_conditions_are_decided_at_parse_time():
    @T.prim_func
    def f(A: T.Buffer((N,), "float32")):
        if N > 4:
            A[0] = T.float32(1)
        else:
            A[0] = T.float32(2)

    assert f.body.value.value == 1.0


def test_runtime_use_of_the_namespace():
    assert isinstance(T.float32(1), tir.FloatImm) and T.float32(1).value == 1.0
    assert T.int64(4).dtype == "int64"
    buf = T.Buffer((4, 2), "float16")
    assert isinstance(buf, tir.Buffer) and buf.dtype == "float16"
    assert T.Buffer[(4,), "int8"].dtype == "int8"
    assert isinstance(T.int32(), tir.Var) and isinstance(T.int32(is_size_var=True), tir.SizeVar)
    assert T.float32x4.dtype == "float32x4"
    with pytest.raises(ScriptError, match="T.block can only be used inside"):
        T.block("x")
    assert I.module_attrs({"a": 1}) == {"a": 1}


def test_module_attrs_and_several_functions():
    mod = from_source('''
@I.ir_module
class Module:
    I.module_attrs({"target": "llvm"})

    @T.prim_func
    def a(A: T.Buffer((1,), "int32")):
        A[0] = 1

    @T.prim_func(private=True)
    def b(A: T.Buffer((1,), "int32")):
        A[0] = 2
''')
    assert mod.attrs == {"target": "llvm"}
    assert [gv.name_hint for gv in mod.get_global_vars()] == ["a", "b"]
    assert "global_symbol" not in mod["b"].attrs
    assert structural_equal(from_source(mod.script()), mod)


def test_let_expression_and_its_round_trip():
    f = from_source('''
@T.prim_func
def f(A: T.Buffer((4,), "int32")):
    for i in range(4):
        A[i] = T.Let(x, i * 2, x + x)
''')
    let = f.body.body.value
    assert isinstance(let, tir.Let) and let.var.name == "x"
    assert structural_equal(from_source(f.script()), f)


def test_shape_names_declared_later_in_the_body():
    f = from_source('''
@T.prim_func
def f(A: T.Buffer((m, n), "float32")):
    m, n = T.int32(), T.int64()
    for i in range(m):
        A[i, 0] = T.float32(0)
''')
    A = f.buffers[0]
    assert (A.shape[0].dtype, A.shape[1].dtype) == ("int32", "int64")
    assert body_of(f).extent is A.shape[0]


def test_legacy_tutorial_spelling():
    f = from_source('''
@T.prim_func
def main(A: T.Buffer[8, "float32"], B: T.Buffer[8, "float32"]) -> None:
    # function attr dict
    T.func_attr({"global_symbol": "main", "tir.noalias": T.bool(True)})
    # body
    # with T.block("root")
    for i in T.serial(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            T.reads(A[vi])
            T.writes(B[vi])
            B[vi] = A[vi] + T.float32(1)
''')
    assert f.attrs["tir.noalias"].value == 1
    assert structural_equal(from_source(f.script()), f)


def test_strides_named_by_strings_and_buffer_fields():
    f = from_source('''
@T.prim_func
def f(A: T.handle):
    m, n = T.int32(), T.int32()
    A_1 = T.match_buffer(A, (m, n), strides=("stride", "stride"), buffer_type="auto")
    A_2 = T.Buffer((A_1.strides[0] * m,), data=A_1.data, buffer_type="auto")
    for i in range(m):
        A_2[i * A_1.strides[0]] = T.float32(0)
''')
    A = f.buffers[0]
    assert len(A.strides) == 2 and A.strides[0] is not A.strides[1]
    store = body_of(f).body
    assert store.buffer.data is A.data and store.buffer.shape[0].a is A.strides[0]
    assert structural_equal(from_source(f.script()), f)
