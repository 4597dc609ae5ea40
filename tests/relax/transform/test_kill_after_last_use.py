"""KillAfterLastUse: kills after last uses; aliases folded; outputs, constants, shapes kept."""
# ruff: noqa: E501 - golden IR text keeps its natural line length

from graphc import relax
from graphc.ir import assert_structural_equal
from graphc.script import from_source

R = relax

HEADER = '''
from graphc.script import ir as I, relax as R, tir as T

@I.ir_module
class Module:
    @T.prim_func
    def exp(a: T.handle, b: T.handle):
        T.evaluate(0)
'''

BEFORE = HEADER + '''
    @R.function
    def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        cls = Module
        storage = R.memory.alloc_storage(R.shape([16]), R.prim_value(0), R.str("global"), R.dtype("float32"))
        alloc = R.memory.alloc_tensor(storage, R.prim_value(0), R.shape([4]), R.dtype("float32"))
        _ = cls.exp(x, alloc)
        lv = alloc
        storage1 = R.memory.alloc_storage(R.shape([16]), R.prim_value(0), R.str("global"), R.dtype("float32"))
        alloc1 = R.memory.alloc_tensor(storage1, R.prim_value(0), R.shape([4]), R.dtype("float32"))
        _1 = cls.exp(lv, alloc1)
        c = R.const(1.0, "float32")
        s = R.shape([4])
        t = (alloc1, x, c, s)
        y = t[0]
        return y
'''

EXPECTED = HEADER + '''
    @R.function
    def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        cls = Module
        storage = R.memory.alloc_storage(R.shape([16]), R.prim_value(0), R.str("global"), R.dtype("float32"))
        alloc = R.memory.alloc_tensor(storage, R.prim_value(0), R.shape([4]), R.dtype("float32"))
        _2 = R.memory.kill_storage(storage)
        _ = cls.exp(x, alloc)
        storage1 = R.memory.alloc_storage(R.shape([16]), R.prim_value(0), R.str("global"), R.dtype("float32"))
        alloc1 = R.memory.alloc_tensor(storage1, R.prim_value(0), R.shape([4]), R.dtype("float32"))
        _3 = R.memory.kill_storage(storage1)
        _1 = cls.exp(alloc, alloc1)
        _4 = R.memory.kill_tensor(alloc)
        c = R.const(1.0, "float32")
        s = R.shape([4])
        t = (alloc1, x, c, s)
        _5 = R.memory.kill_tensor(alloc1)
        y = t[0]
        _6 = R.vm.kill_object(t)
        return y
'''


def test_kill_after_last_use():
    after = R.transform.KillAfterLastUse()(from_source(BEFORE))
    assert_structural_equal(after, from_source(EXPECTED))
    assert R.analysis.well_formed(after)


def test_idempotent_and_printable():
    after = R.transform.KillAfterLastUse()(from_source(BEFORE))
    assert R.transform.KillAfterLastUse()(after)["main"] is after["main"]
    assert_structural_equal(from_source(after.script()), after)


def test_if_branches():
    mod = from_source(HEADER + '''
    @R.function
    def main(x: R.Tensor((4,), "float32"), c: R.Prim("bool")) -> R.Tensor((4,), "float32"):
        cls = Module
        a = R.builtin.alloc_tensor(R.shape([4]), R.dtype("float32"), R.prim_value(0), R.str("global"))
        _ = cls.exp(x, a)
        if c:
            b = R.builtin.alloc_tensor(R.shape([4]), R.dtype("float32"), R.prim_value(0), R.str("global"))
            _1 = cls.exp(a, b)
            d = R.builtin.alloc_tensor(R.shape([4]), R.dtype("float32"), R.prim_value(0), R.str("global"))
            _2 = cls.exp(b, d)
            r = d
        else:
            r = x
        return r
''')
    expected = from_source(HEADER + '''
    @R.function
    def main(x: R.Tensor((4,), "float32"), c: R.Prim("bool")) -> R.Tensor((4,), "float32"):
        cls = Module
        a = R.builtin.alloc_tensor(R.shape([4]), R.dtype("float32"), R.prim_value(0), R.str("global"))
        _ = cls.exp(x, a)
        if c:
            b = R.builtin.alloc_tensor(R.shape([4]), R.dtype("float32"), R.prim_value(0), R.str("global"))
            _1 = cls.exp(a, b)
            d = R.builtin.alloc_tensor(R.shape([4]), R.dtype("float32"), R.prim_value(0), R.str("global"))
            _2 = cls.exp(b, d)
            _3 = R.memory.kill_tensor(b)
            r = d
        else:
            r = x
        _4 = R.memory.kill_tensor(a)
        return r
''')
    after = R.transform.KillAfterLastUse()(mod)
    assert_structural_equal(after, expected)
    assert R.analysis.well_formed(after)


def test_nothing_to_kill():
    mod = from_source(HEADER + '''
    @R.function
    def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
        return x
''')
    assert R.transform.KillAfterLastUse()(mod)["main"] is mod["main"]


NARROWING = HEADER + '''
    @R.function
    def main(x: R.Tensor(("n",), "float32")) -> R.Tensor((4,), "float32"):
        n = T.int64()
        cls = Module
        storage = R.memory.alloc_storage(R.shape([16]), R.prim_value(0), R.str("global"), R.dtype("float32"))
        alloc = R.memory.alloc_tensor(storage, R.prim_value(0), R.shape([n]), R.dtype("float32"))
        _ = cls.exp(x, alloc)
        a = R.match_cast(alloc, R.Tensor((4,), "float32"))
        storage1 = R.memory.alloc_storage(R.shape([16]), R.prim_value(0), R.str("global"), R.dtype("float32"))
        alloc1 = R.memory.alloc_tensor(storage1, R.prim_value(0), R.shape([4]), R.dtype("float32"))
        _1 = cls.exp(a, alloc1)
        return alloc1
'''


def test_a_narrowing_match_cast_shares_its_values_register():
    """`a` is `alloc` seen with a refined shape (one VM register): `alloc` dies after `a`'s last
    use, not after the cast, and `a` itself is never killed."""
    after = R.transform.KillAfterLastUse()(from_source(NARROWING))
    text = after["main"].script()
    assert text.index("R.memory.kill_tensor(alloc)") > text.index("cls.exp(a, alloc1)")
    assert "kill_tensor(a)" not in text
