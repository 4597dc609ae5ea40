"""StaticPlanBlockMemory: storage reuse, what is not planned, symbolic sizes and upper bounds."""
# ruff: noqa: E501 - golden IR text keeps its natural line length

from graphc import relax, tir
from graphc.ir import assert_structural_equal
from graphc.script import from_source
from graphc.tir.arith import Analyzer

R = relax

HEADER = '''
from graphc.script import ir as I, relax as R, tir as T

@I.ir_module
class Module:
    @T.prim_func
    def exp(a: T.handle, b: T.handle):
        T.evaluate(0)

    @T.prim_func
    def pad(a: T.handle, b: T.handle):
        T.evaluate(0)
'''

BASIC = HEADER + '''
    @R.function
    def main(x: R.Tensor((2, 3, 4), "float32")) -> R.Tensor((2, 3, 4), "float32"):
        cls = Module
        alloc = R.builtin.alloc_tensor(R.shape([2, 3, 4]), R.dtype("float32"), R.prim_value(0), R.str("global"))
        _ = cls.exp(x, alloc)
        lv = alloc
        alloc1 = R.builtin.alloc_tensor(R.shape([2, 3, 4]), R.dtype("float32"), R.prim_value(0), R.str("global"))
        _1 = cls.exp(lv, alloc1)
        alloc2 = R.builtin.alloc_tensor(R.shape([2, 3, 4]), R.dtype("float32"), R.prim_value(0), R.str("global"))
        _2 = cls.exp(alloc1, alloc2)
        alloc3 = R.builtin.alloc_tensor(R.shape([2, 3, 4]), R.dtype("float32"), R.prim_value(0), R.str("global"))
        _3 = cls.exp(alloc2, alloc3)
        return alloc3
'''

BASIC_EXPECTED = HEADER + '''
    @R.function
    def main(x: R.Tensor((2, 3, 4), "float32")) -> R.Tensor((2, 3, 4), "float32"):
        cls = Module
        storage = R.memory.alloc_storage(R.shape([96]), R.prim_value(0), R.str("global"), R.dtype("float32"))
        alloc = R.memory.alloc_tensor(storage, R.prim_value(0), R.shape([2, 3, 4]), R.dtype("float32"))
        _ = cls.exp(x, alloc)
        lv = alloc
        storage1 = R.memory.alloc_storage(R.shape([96]), R.prim_value(0), R.str("global"), R.dtype("float32"))
        alloc1 = R.memory.alloc_tensor(storage1, R.prim_value(0), R.shape([2, 3, 4]), R.dtype("float32"))
        _1 = cls.exp(lv, alloc1)
        alloc2 = R.memory.alloc_tensor(storage, R.prim_value(0), R.shape([2, 3, 4]), R.dtype("float32"))
        _2 = cls.exp(alloc1, alloc2)
        alloc3 = R.builtin.alloc_tensor(R.shape([2, 3, 4]), R.dtype("float32"), R.prim_value(0), R.str("global"))
        _3 = cls.exp(alloc2, alloc3)
        return alloc3
'''


def _values(mod, name="main"):
    return [b.value for block in mod[name].body.blocks for b in block.bindings]


def _op_names(mod, name="main"):
    return [v.op.name for v in _values(mod, name) if isinstance(v, R.Call) and isinstance(v.op, R.Op)]


def _calls_of(mod, op_name, name="main"):
    return [v for v in _values(mod, name) if isinstance(v, R.Call) and getattr(v.op, "name", None) == op_name]


def test_basic_reuse():
    after = R.transform.StaticPlanBlockMemory()(from_source(BASIC))
    assert_structural_equal(after, from_source(BASIC_EXPECTED))
    assert R.analysis.well_formed(after)


def test_idempotent_and_printable():
    after = R.transform.StaticPlanBlockMemory()(from_source(BASIC))
    assert R.transform.StaticPlanBlockMemory()(after)["main"] is after["main"]
    assert_structural_equal(from_source(after.script()), after)


def _chain(length: int, shape=(64, 64), attrs=None):
    """`length` elementwise ops in a row, legalized and rewritten to explicit allocations."""
    x = R.Var("x", R.TensorStructInfo(shape, "float32"))
    bb = R.BlockBuilder()
    with bb.function("main", [x], attrs=attrs):
        with bb.dataflow():
            lv = x
            for i in range(length - 1):
                lv = bb.emit(R.op.nn.relu(lv) if i % 2 else R.op.exp(lv))
            gv = bb.emit_output(R.op.negative(lv))
        bb.emit_func_output(gv)
    mod = R.transform.LegalizeOps()(bb.get())
    mod = R.transform.ToNonDataflow()(mod)
    return R.transform.CallTIRRewrite()(mod)


def _storage_bytes(mod):
    return [v.args[0].values[0] for v in _values(mod) if isinstance(v, R.Call) and
            getattr(v.op, "name", None) == "relax.memory.alloc_storage"]


def test_deep_chain_uses_two_storages():
    mod = _chain(20)
    intermediates = 19 * 64 * 64 * 4
    after = R.transform.StaticPlanBlockMemory()(mod)
    sizes = _storage_bytes(after)
    assert len(sizes) == 2
    assert sum(int(s) for s in sizes) == 2 * 64 * 64 * 4 < intermediates
    names = _op_names(after)
    assert names.count("relax.memory.alloc_tensor") == 19
    assert names.count("relax.builtin.alloc_tensor") == 1  # the returned tensor
    assert R.analysis.well_formed(after)


def test_best_fit_and_growing():
    mod = from_source(HEADER + '''
    @R.function
    def main(x: R.Tensor((64,), "float32")) -> R.Tensor((8,), "float32"):
        cls = Module
        a = R.builtin.alloc_tensor(R.shape([64]), R.dtype("float32"), R.prim_value(0), R.str("global"))
        _ = cls.exp(x, a)
        b = R.builtin.alloc_tensor(R.shape([16]), R.dtype("float32"), R.prim_value(0), R.str("global"))
        _1 = cls.pad(a, b)
        c = R.builtin.alloc_tensor(R.shape([32]), R.dtype("float32"), R.prim_value(0), R.str("global"))
        _2 = cls.pad(b, c)
        d = R.builtin.alloc_tensor(R.shape([128]), R.dtype("float32"), R.prim_value(0), R.str("global"))
        _3 = cls.pad(c, d)
        e = R.builtin.alloc_tensor(R.shape([8]), R.dtype("float32"), R.prim_value(0), R.str("global"))
        _4 = cls.pad(d, e)
        return e
''')
    after = R.transform.StaticPlanBlockMemory()(mod)
    values = _values(after)
    storages = [v for v in values if getattr(v.op, "name", None) == "relax.memory.alloc_storage"]
    # a: s0 (256 B); b: s1 (64 B); c: takes s0 (released by a, >= 128 B);
    # d: takes s1 (released by b), grown from 64 to 512 B; e is returned
    assert [int(s.args[0].values[0]) for s in storages] == [256, 512]
    tensors = [v for v in values if getattr(v.op, "name", None) == "relax.memory.alloc_tensor"]
    owners = [storages.index(next(b.value for b in after["main"].body.blocks[0].bindings
                                  if b.var is t.args[0])) for t in tensors]
    assert owners == [0, 1, 0, 1]


def test_dtypes_and_scopes_do_not_share():
    mod = from_source(HEADER + '''
    @R.function
    def main(x: R.Tensor((8,), "float32")) -> R.Tensor((8,), "float32"):
        cls = Module
        a = R.builtin.alloc_tensor(R.shape([8]), R.dtype("float32"), R.prim_value(0), R.str("global"))
        _ = cls.exp(x, a)
        b = R.builtin.alloc_tensor(R.shape([8]), R.dtype("int32"), R.prim_value(0), R.str("global"))
        _1 = cls.exp(a, b)
        c = R.builtin.alloc_tensor(R.shape([8]), R.dtype("float32"), R.prim_value(0), R.str("shared"))
        _2 = cls.exp(b, c)
        d = R.builtin.alloc_tensor(R.shape([8]), R.dtype("float32"), R.prim_value(0), R.str("global"))
        _3 = cls.exp(c, d)
        return d
''')
    after = R.transform.StaticPlanBlockMemory()(mod)
    storages = [v for v in _values(after) if getattr(v.op, "name", None) == "relax.memory.alloc_storage"]
    assert [(s.args[2].value, s.args[3].value) for s in storages] == [
        ("global", "float32"), ("global", "int32"), ("shared", "float32")]


def test_not_planned():
    mod = from_source(HEADER + '''
    @R.function
    def helper(y: R.Tensor((8,), "float32")) -> R.Tensor((8,), "float32"):
        return y

    @R.function
    def main(x: R.Tensor((8,), "float32")) -> R.Tuple(R.Tensor((8,), "float32"), R.Tensor((8,), "float32")):
        cls = Module
        a = R.builtin.alloc_tensor(R.shape([8]), R.dtype("float32"), R.prim_value(0), R.str("global"))
        _ = cls.exp(x, a)
        b = R.builtin.alloc_tensor(R.shape([8]), R.dtype("float32"), R.prim_value(0), R.str("global"))
        _1 = cls.exp(a, b)
        c = cls.helper(b)
        d = R.builtin.alloc_tensor(R.shape([8]), R.dtype("float32"), R.prim_value(0), R.str("global"))
        _2 = cls.exp(c, d)
        t = (a, d)
        return t
''')
    # a and d escape through the returned tuple, b is passed to a Relax function
    after = R.transform.StaticPlanBlockMemory()(mod)
    assert after["main"] is mod["main"]


def test_reshape_shares_the_storage():
    mod = from_source(HEADER + '''
    @R.function
    def main(x: R.Tensor((2, 4), "float32")) -> R.Tensor((8,), "float32"):
        cls = Module
        a = R.builtin.alloc_tensor(R.shape([2, 4]), R.dtype("float32"), R.prim_value(0), R.str("global"))
        _ = cls.exp(x, a)
        r = R.reshape(a, R.shape([8]))
        b = R.builtin.alloc_tensor(R.shape([8]), R.dtype("float32"), R.prim_value(0), R.str("global"))
        _1 = cls.exp(r, b)
        c = R.builtin.alloc_tensor(R.shape([8]), R.dtype("float32"), R.prim_value(0), R.str("global"))
        _2 = cls.exp(b, c)
        d = R.builtin.alloc_tensor(R.shape([8]), R.dtype("float32"), R.prim_value(0), R.str("global"))
        _3 = cls.exp(c, d)
        return d
''')
    after = R.transform.StaticPlanBlockMemory()(mod)
    # a (read through r by the second exp) is released only then, so c reuses a's storage
    assert len(_storage_bytes(after)) == 2
    bindings = {b.var.name_hint: b.value for b in after["main"].body.blocks[0].bindings}
    assert bindings["c"].args[0] is bindings["a"].args[0]


def test_symbolic_sizes():
    mod = from_source(HEADER + '''
    @R.function
    def main(x: R.Tensor(("n", 4), "float32")) -> R.Tensor(("n", 4), "float32"):
        n = T.int64()
        cls = Module
        a = R.builtin.alloc_tensor(R.shape([n, 4]), R.dtype("float32"), R.prim_value(0), R.str("global"))
        _ = cls.exp(x, a)
        b = R.builtin.alloc_tensor(R.shape([n, 4]), R.dtype("float32"), R.prim_value(0), R.str("global"))
        _1 = cls.exp(a, b)
        c = R.builtin.alloc_tensor(R.shape([n, 4]), R.dtype("float32"), R.prim_value(0), R.str("global"))
        _2 = cls.exp(b, c)
        d = R.builtin.alloc_tensor(R.shape([n, 4]), R.dtype("float32"), R.prim_value(0), R.str("global"))
        _3 = cls.exp(c, d)
        return d
''')
    after = R.transform.StaticPlanBlockMemory()(mod)
    sizes = _storage_bytes(after)
    n = mod["main"].params[0].struct_info.shape_values[0]
    assert len(sizes) == 2 and all(Analyzer().can_prove_equal(s, n * 16) for s in sizes)
    assert_structural_equal(from_source(after.script()), after)


def test_upper_bound():
    mod = _chain(5, shape=(tir.Var("n", "int64"), 8), attrs={"tir_var_upper_bound": {"n": 32}})
    after = R.transform.StaticPlanBlockMemory()(mod)
    assert [int(s) for s in _storage_bytes(after)] == [32 * 8 * 4, 32 * 8 * 4]
    tensors = [v for v in _values(after) if isinstance(v, R.Call) and
               getattr(v.op, "name", None) == "relax.memory.alloc_tensor"]
    assert len(tensors) == 4
    assert all(not isinstance(t.args[2].values[0], tir.IntImm) for t in tensors)  # actual shape (n, 8)
    assert_structural_equal(from_source(after.script()), after)


def test_plan_dynamic_output():
    attrs = {"tir_var_upper_bound": {"n": 32}, "relax.memory_plan_dynamic_func_output": True}
    mod = _chain(2, shape=(tir.Var("n", "int64"), 8), attrs=attrs)
    after = R.transform.StaticPlanBlockMemory()(mod)
    assert "relax.builtin.alloc_tensor" not in _op_names(after)
    assert [int(s) for s in _storage_bytes(after)] == [32 * 8 * 4, 32 * 8 * 4]
    assert "relax.memory_plan_dynamic_func_output" not in after["main"].attrs


def test_if_branches_are_planned_on_their_own():
    mod = from_source(HEADER + '''
    @R.function
    def main(x: R.Tensor((8,), "float32"), c: R.Prim("bool")) -> R.Tensor((8,), "float32"):
        cls = Module
        a = R.builtin.alloc_tensor(R.shape([8]), R.dtype("float32"), R.prim_value(0), R.str("global"))
        _ = cls.exp(x, a)
        if c:
            b = R.builtin.alloc_tensor(R.shape([8]), R.dtype("float32"), R.prim_value(0), R.str("global"))
            _1 = cls.exp(x, b)
            d = R.builtin.alloc_tensor(R.shape([8]), R.dtype("float32"), R.prim_value(0), R.str("global"))
            _2 = cls.exp(b, d)
            r = d
        else:
            r = x
        e = R.builtin.alloc_tensor(R.shape([8]), R.dtype("float32"), R.prim_value(0), R.str("global"))
        _3 = cls.exp(a, e)
        f = R.builtin.alloc_tensor(R.shape([8]), R.dtype("float32"), R.prim_value(0), R.str("global"))
        _4 = cls.exp(e, f)
        return f
''')
    after = R.transform.StaticPlanBlockMemory()(mod)
    assert R.analysis.well_formed(after)
    outer = _op_names(after)
    assert outer.count("relax.memory.alloc_storage") == 2  # a, e; b's storage stays in its branch
    assert_structural_equal(from_source(after.script()), after)
