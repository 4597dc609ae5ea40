"""LowerAllocTensor: builtin.alloc_tensor -> memory.alloc_storage + memory.alloc_tensor."""
# ruff: noqa: E501 - golden IR text keeps its natural line length

from graphc import relax
from graphc.ir import assert_structural_equal
from graphc.script import from_source

R = relax

BEFORE = '''
from graphc.script import ir as I, relax as R, tir as T

@I.ir_module
class Module:
    @T.prim_func
    def exp(a: T.handle, b: T.handle):
        T.evaluate(0)

    @R.function
    def main(x: R.Tensor(("n", 4), "float32")) -> R.Tuple(R.Tensor(("n", 4), "float32"), R.Tensor((2, 3), "float16")):
        n = T.int64()
        cls = Module
        storage = R.memory.alloc_storage(R.shape([64]), R.prim_value(0), R.str("global"), R.dtype("float32"))
        a = R.memory.alloc_tensor(storage, R.prim_value(0), R.shape([4, 4]), R.dtype("float32"))
        alloc = R.builtin.alloc_tensor(R.shape([n, 4]), R.dtype("float32"), R.prim_value(0), R.str("global"))
        _ = cls.exp(x, alloc)
        alloc1 = R.builtin.alloc_tensor(R.shape([2, 3]), R.dtype("float16"), R.prim_value(1), R.str("global"))
        _1 = cls.exp(x, alloc1)
        return (alloc, alloc1)
'''

EXPECTED = '''
from graphc.script import ir as I, relax as R, tir as T

@I.ir_module
class Module:
    @T.prim_func
    def exp(a: T.handle, b: T.handle):
        T.evaluate(0)

    @R.function
    def main(x: R.Tensor(("n", 4), "float32")) -> R.Tuple(R.Tensor(("n", 4), "float32"), R.Tensor((2, 3), "float16")):
        n = T.int64()
        cls = Module
        storage = R.memory.alloc_storage(R.shape([64]), R.prim_value(0), R.str("global"), R.dtype("float32"))
        a = R.memory.alloc_tensor(storage, R.prim_value(0), R.shape([4, 4]), R.dtype("float32"))
        storage1 = R.memory.alloc_storage(R.shape([n * 16]), R.prim_value(0), R.str("global"), R.dtype("float32"))
        alloc = R.memory.alloc_tensor(storage1, R.prim_value(0), R.shape([n, 4]), R.dtype("float32"))
        _ = cls.exp(x, alloc)
        storage2 = R.memory.alloc_storage(R.shape([12]), R.prim_value(1), R.str("global"), R.dtype("float16"))
        alloc1 = R.memory.alloc_tensor(storage2, R.prim_value(0), R.shape([2, 3]), R.dtype("float16"))
        _1 = cls.exp(x, alloc1)
        return (alloc, alloc1)
'''


def test_lower_alloc_tensor():
    after = R.transform.LowerAllocTensor()(from_source(BEFORE))
    assert_structural_equal(after, from_source(EXPECTED))
    assert R.analysis.well_formed(after)


def test_idempotent_and_printable():
    after = R.transform.LowerAllocTensor()(from_source(BEFORE))
    assert R.transform.LowerAllocTensor()(after)["main"] is after["main"]
    assert_structural_equal(from_source(after.script()), after)
