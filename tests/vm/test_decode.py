"""Load-time decoding: which memory a frame may keep across calls, and the generated code."""

import numpy as np

import graphc
from graphc.vm import VirtualMachine
from graphc.vm.bytecode import VOID, Arg, Call, FuncEntry, Ret
from graphc.vm.decode import reusable_registers
from graphc.vm.executable import Executable
from graphc.vm.values import ShapeTuple

NAMES = ["main", "vm.builtin.alloc_storage", "vm.builtin.alloc_tensor", "kern", "vm.builtin.make_tuple",
         "vm.builtin.reshape", "vm.builtin.null_value"]
KINDS = ["vm", "builtin", "builtin", "kernel", "builtin", "builtin", "builtin"]
STORAGE, TENSOR, KERNEL, TUPLE, RESHAPE, NULL = 1, 2, 3, 4, 5, 6
C = Arg.const


def entry(code, nregs=8):
    return FuncEntry("vm", "main", ["x"], nregs, code)


def alloc(storage_reg, tensor_reg):
    return [Call(storage_reg, STORAGE, (Arg.ctx(), C(0), Arg.imm(0), C(1), C(2))),
            Call(tensor_reg, TENSOR, (Arg.reg(storage_reg), Arg.imm(0), C(3), C(1)))]


def test_storage_whose_tensors_only_feed_kernels_is_reused():
    code = [*alloc(1, 2), Call(VOID, KERNEL, (Arg.reg(0), Arg.reg(2))),
            *alloc(3, 4), Call(VOID, KERNEL, (Arg.reg(2), Arg.reg(4))),
            Call(2, NULL, ()), Ret(Arg.reg(4))]
    storages, tensors, _ = reusable_registers(entry(code), NAMES, KINDS)
    assert storages == {1} and tensors == {2}  # storage 3 holds the returned tensor


def test_escaping_through_a_tuple_or_a_reshape_view_prevents_reuse():
    code = [*alloc(1, 2), Call(5, TUPLE, (Arg.reg(2),)), Ret(Arg.reg(5))]
    assert reusable_registers(entry(code), NAMES, KINDS)[0] == set()
    code = [*alloc(1, 2), Call(5, RESHAPE, (Arg.reg(2), C(3))), Ret(Arg.reg(5))]
    assert reusable_registers(entry(code), NAMES, KINDS)[0] == set()
    code = [*alloc(1, 2), Call(5, RESHAPE, (Arg.reg(2), C(3))), Call(VOID, KERNEL, (Arg.reg(5), Arg.reg(0))),
            Ret(Arg.reg(0))]
    assert reusable_registers(entry(code), NAMES, KINDS)[0] == {1}


def test_builtin_only_bytecode_runs_and_shows_its_source():
    consts = [ShapeTuple((64,)), "float32", "global", ShapeTuple((4, 4))]
    names = ["main", "vm.builtin.alloc_storage", "vm.builtin.alloc_tensor", "vm.builtin.make_tuple"]
    functions = [FuncEntry("vm", "main", ["x"], 4, [
        Call(1, 1, (Arg.ctx(), Arg.const(0), Arg.imm(0), Arg.const(1), Arg.const(2))),
        Call(2, 2, (Arg.reg(1), Arg.imm(0), Arg.const(3), Arg.const(1))),
        Call(3, 3, (Arg.reg(0), Arg.reg(2))),
        Ret(Arg.reg(3)),
    ])] + [FuncEntry("builtin", n) for n in names[1:]]
    vm = VirtualMachine(Executable(functions, consts), graphc.cpu())
    x, t = vm["main"](np.ones(2, "float32"))
    assert t.shape == (4, 4) and t.dtype == "float32" and t.data_ptr % 64 == 0
    assert "def block0(regs):" in vm._function("main").source
