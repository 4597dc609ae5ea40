"""Load-time decoding: which memory a frame may keep across calls, and the generated code."""

import numpy as np
import pytest

import graphc
from graphc.vm import VirtualMachine, get_builtin, register_builtin
from graphc.vm.bytecode import VOID, Arg, Call, FuncEntry, Ret
from graphc.vm.decode import BUILTIN_RULES, Decoder, reusable_registers
from graphc.vm.executable import Executable
from graphc.vm.values import ShapeTuple, VMError

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


def builtin_program(names, code, consts=(), nregs=4):
    """An executable whose `main(x)` runs `code`, calling the builtins `names` (function 1 on)."""
    functions = [FuncEntry("vm", "main", ["x"], nregs, code)] + [FuncEntry("builtin", n) for n in names]
    return Executable(functions, list(consts))


def test_every_builtin_rule_names_a_registered_builtin():
    assert BUILTIN_RULES and all(get_builtin(name) is not None for name in BUILTIN_RULES)


def test_a_rule_that_does_not_apply_leaves_a_plain_builtin_call():
    # tuple_getitem is inlined for an immediate index; a register index calls the builtin
    code = [Call(1, 1, (Arg.reg(0), Arg.reg(0))), Call(2, 2, (Arg.reg(1), Arg.imm(1))),
            Call(3, 2, (Arg.reg(1), Arg.reg(2))), Ret(Arg.reg(3))]
    vm = VirtualMachine(builtin_program(["vm.builtin.make_tuple", "vm.builtin.tuple_getitem"], code))
    source = vm._function("main").source
    assert "regs[2] = regs[1][1]" in source and "regs[3] = b" in source
    assert vm["main"](0) == 0


def test_an_unknown_builtin_is_named_when_the_vm_is_created():
    code = [Call(1, 1, (Arg.reg(0),)), Ret(Arg.reg(1))]
    with pytest.raises(VMError, match="calls 'test.decode.missing', which is neither a builtin nor a kernel"):
        VirtualMachine(builtin_program(["test.decode.missing"], code))


class Host:
    """The decoder's interface and nothing else, counting what the decoder asks for."""

    def __init__(self, exe):
        self.executable, self.callers, self.asked, self.nbytes = exe, [None] * len(exe.functions), [], 0

    def constant(self, index):
        self.asked.append(("constant", index))
        return self.executable.constants[index]

    def kernel(self, findex):
        raise AssertionError("no kernels here")

    def builtin(self, name):
        self.asked.append(("builtin", name))
        return get_builtin(name)

    def function_value(self, findex):
        self.asked.append(("function_value", findex))
        return self.builtin(self.executable.functions[findex].name)

    def reserve_kernel_slots(self, nbytes):
        self.nbytes = max(self.nbytes, nbytes)


def test_the_decoder_needs_only_its_host_interface():
    names = ["test.decode.twice", "vm.builtin.invoke_closure"]
    register_builtin(names[0], lambda v: 2 * v, override=True)
    code = [Call(1, 1, (Arg.reg(0),)), Call(2, 2, (Arg.func(1), Arg.reg(1))), Ret(Arg.reg(2))]
    host = Host(builtin_program(names, code))
    blocks, cache_slots = Decoder(host, 0).decode()
    regs = [3, None, None, None, None, None, None, None, None]
    assert blocks[0](regs) == -1 and regs[4] == 12  # RET is the slot after the 4 registers
    assert ("function_value", 1) in host.asked and cache_slots == 0


def test_vm_entries_are_cached():
    vm = VirtualMachine(builtin_program([], [Ret(Arg.reg(0))]))
    assert vm["main"] is vm["main"]
    with pytest.raises(KeyError, match="has no function 'other'"):
        vm["other"]
