"""VMBuiltinLower: memory.* -> vm.*, reshape -> vm.builtin.reshape, shape-tailed calls -> call_tir_dyn."""
# ruff: noqa: E501 - golden IR text keeps its natural line length

import pytest

from graphc import relax
from graphc.errors import TypeInferenceError
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

    @T.prim_func
    def scale(a: T.handle, b: T.handle, k: T.int64):
        T.evaluate(0)
'''

BEFORE = HEADER + '''
    @R.function
    def main(x: R.Tensor(("n", 4), "float32")) -> R.Tensor(("n * 4",), "float32"):
        n = T.int64()
        cls = Module
        storage = R.memory.alloc_storage(R.shape([n * 16]), R.prim_value(0), R.str("global"), R.dtype("float32"))
        alloc = R.memory.alloc_tensor(storage, R.prim_value(0), R.shape([n, 4]), R.dtype("float32"))
        _ = R.memory.kill_storage(storage)
        _1 = cls.exp(x, alloc)
        alloc1 = R.builtin.alloc_tensor(R.shape([n, 4]), R.dtype("float32"), R.prim_value(0), R.str("global"))
        _2 = cls.scale(alloc, alloc1, R.shape([n]))
        _3 = R.vm.call_tir_dyn(cls.scale, (alloc, alloc1, R.shape([2])))
        _4 = R.memory.kill_tensor(alloc)
        y = R.reshape(alloc1, R.shape([n * 4]))
        return y
'''

EXPECTED = HEADER + '''
    @R.function
    def main(x: R.Tensor(("n", 4), "float32")) -> R.Tensor(("n * 4",), "float32"):
        n = T.int64()
        cls = Module
        storage = R.vm.alloc_storage(R.shape([n * 16]), R.prim_value(0), R.dtype("uint8"), R.str("global"))
        alloc = R.vm.alloc_tensor(storage, R.prim_value(0), R.shape([n, 4]), R.dtype("float32"))
        _ = R.vm.kill_object(storage)
        _1 = cls.exp(x, alloc)
        alloc1 = R.builtin.alloc_tensor(R.shape([n, 4]), R.dtype("float32"), R.prim_value(0), R.str("global"))
        _2 = R.vm.call_tir_dyn(cls.scale, (alloc, alloc1, R.shape([n])))
        _3 = R.vm.call_tir_dyn(cls.scale, (alloc, alloc1, R.shape([2])))
        _4 = R.vm.kill_object(alloc)
        y = R.call_packed("vm.builtin.reshape", alloc1, R.shape([n * 4]), sinfo_args=R.Tensor((n * 4,), "float32"))
        return y
'''


def _without_builtin_alloc(text: str) -> str:
    return text.replace(
        'alloc1 = R.builtin.alloc_tensor(R.shape([n, 4]), R.dtype("float32"), R.prim_value(0), R.str("global"))',
        'alloc1 = R.vm.alloc_tensor(storage, R.prim_value(0), R.shape([n, 4]), R.dtype("float32"))')


def test_vm_builtin_lower():
    after = R.transform.VMBuiltinLower()(from_source(_without_builtin_alloc(BEFORE)))
    assert_structural_equal(after, from_source(_without_builtin_alloc(EXPECTED)))
    assert R.analysis.well_formed(after)


def test_idempotent_and_printable():
    after = R.transform.VMBuiltinLower()(from_source(_without_builtin_alloc(BEFORE)))
    assert R.transform.VMBuiltinLower()(after)["main"] is after["main"]
    assert_structural_equal(from_source(after.script()), after)


def test_builtin_alloc_tensor_must_be_lowered_first():
    with pytest.raises(TypeInferenceError, match="LowerAllocTensor"):
        R.transform.VMBuiltinLower()(from_source(BEFORE))
