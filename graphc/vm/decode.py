"""Decoding bytecode into Python functions, once, when a VirtualMachine is created.

Each basic block of a VM function becomes one Python function `block(regs) -> next block`
whose statements are the block's instructions with everything resolvable at load time
already resolved: builtins and kernels bound, constants bound, kernel argument layouts
packed by a precompiled `struct.Struct`, register indices as literals; calls to the common
builtins become inline code by the rules of `BUILTIN_RULES`. The source of those functions
is generated here from validated integers only (no text from the executable file is ever
interpolated), so decoding runs no code from the file. The decoder sees the VM only through
`DecoderHost`.

A frame's register list `regs` has the function's registers, then five fixed slots:
the return value, the context (the `Frame`), the kernel slot buffer and its address, and
the frame's cache (storage, tensors and shape heap the memory plan lets a frame reuse
across calls; see `reusable_registers`).
"""

from __future__ import annotations

import struct
import time
from collections.abc import Callable
from typing import Protocol

from ..runtime.tensor import Tensor
from .builtins import read_if_cond
from .bytecode import VOID, Call, Goto, If, Ret
from .executable import Executable
from .shape_codes import MakeShapeCode, MatchShapeCode
from .values import ShapeTuple, Storage, VMError

# Builtins that only read their arguments and never keep them: a tensor passed to them does
# not escape the frame.
_READERS = {
    "vm.builtin.check_tensor_info", "vm.builtin.match_shape", "vm.builtin.shape_of",
    "vm.builtin.check_shape_info", "vm.builtin.check_tuple_info", "vm.builtin.check_prim_value_info",
}
_HEAP_USERS = {"vm.builtin.match_shape", "vm.builtin.make_shape", "vm.builtin.match_prim_value",
               "vm.builtin.make_prim_value"}


class DecoderHost(Protocol):
    """What the decoder needs from the VM it decodes for; `VirtualMachine` provides it.

    Everything here is resolved once, at load time: the generated code holds the results.
    """

    executable: Executable
    callers: list
    """The entry point of each VM function, by function index. Generated code looks a callee
    up in this list when it runs, so the VM may fill it in after decoding its functions."""

    def constant(self, index: int):
        """Constant `index` of the executable, placed on the VM's device."""

    def kernel(self, findex: int):
        """The loaded kernel of function `findex` (its `params`, `address`, `raise_error`, ...)."""

    def builtin(self, name: str) -> Callable:
        """The builtin `name`; a VMError naming it when there is none."""

    def function_value(self, findex: int) -> Callable:
        """Function `findex` (a VM function, a kernel or a builtin) as a callable value."""

    def reserve_kernel_slots(self, nbytes: int) -> None:
        """Make every frame's kernel argument buffer at least `nbytes` long."""


class FrameLayout:
    """Where the fixed slots of a frame's register list are, for a function of `num_registers`."""

    def __init__(self, num_registers: int):
        self.num_registers = num_registers
        self.RET = num_registers
        self.CTX = num_registers + 1
        self.BUF = num_registers + 2
        self.ADDR = num_registers + 3
        self.CACHE = num_registers + 4
        self.size = num_registers + 5


def reusable_registers(entry, names: list[str], kinds: list[str]) -> tuple[set, set, set]:
    """Registers whose storage, tensor views and shape heap a frame may keep from call to call.

    A storage register qualifies when one `alloc_storage` writes it and it is only ever used
    as the storage of `alloc_tensor`; each tensor made from it must be written once and only
    be read by kernels, by the pure reading builtins, or by `reshape` whose result obeys the
    same rule. Such memory never outlives the call, so the next call may reuse it.
    Returns (storage registers, tensor registers, shape heap registers).
    """
    writes: dict[int, int] = {}
    uses: dict[int, list] = {}
    for pc, instr in enumerate(entry.code):
        if isinstance(instr, Call):
            name = names[instr.func]
            if instr.dst != VOID and name != "vm.builtin.null_value":
                writes[instr.dst] = writes.get(instr.dst, 0) + 1
            for pos, a in enumerate(instr.args):
                if a.kind == "reg":
                    uses.setdefault(a.value, []).append((pc, pos))
        elif isinstance(instr, Ret) and instr.result.kind == "reg":
            uses.setdefault(instr.result.value, []).append((pc, -1))
        elif isinstance(instr, If):
            uses.setdefault(instr.cond, []).append((pc, -1))
    for r in range(len(entry.params)):
        writes[r] = writes.get(r, 0) + 1

    def once(reg: int) -> bool:
        return writes.get(reg, 0) == 1

    def tensor_stays(reg: int, seen: set) -> bool:
        if not once(reg) or reg in seen:
            return False
        seen.add(reg)
        for pc, pos in uses.get(reg, []):
            if pos < 0:
                return False
            instr = entry.code[pc]
            name, kind = names[instr.func], kinds[instr.func]
            if kind == "kernel" or name in _READERS:
                continue
            if name == "vm.builtin.reshape" and pos == 0 and instr.dst != VOID:
                if tensor_stays(instr.dst, seen):
                    continue
            return False
        return True

    storages, tensors, heaps = set(), set(), set()
    for instr in entry.code:
        if not isinstance(instr, Call) or instr.dst == VOID or not once(instr.dst):
            continue
        name = names[instr.func]
        if name == "vm.builtin.alloc_shape_heap":
            if all(kinds[entry.code[pc].func] == "kernel" or names[entry.code[pc].func] in _HEAP_USERS
                   for pc, pos in uses.get(instr.dst, []) if pos >= 0) and \
                    all(pos >= 0 for _, pos in uses.get(instr.dst, [])):
                heaps.add(instr.dst)
        if name != "vm.builtin.alloc_storage":
            continue
        made = []
        ok = True
        for pc, pos in uses.get(instr.dst, []):
            user = entry.code[pc] if pos >= 0 else None
            if user is None or names[user.func] != "vm.builtin.alloc_tensor" or pos != 0 or user.dst == VOID:
                ok = False
                break
            made.append(user.dst)
        seen: set = set()
        if ok and all(tensor_stays(t, seen) for t in made):
            storages.add(instr.dst)
            tensors.update(made)
    return storages, tensors, heaps


class Decoder:
    """Turns one VM function into its block functions (see the module docstring)."""

    def __init__(self, vm: DecoderHost, findex: int, profile=None):
        self.vm = vm
        exe = vm.executable
        self.entry = exe.functions[findex]
        self.names = [f.name for f in exe.functions]
        self.kinds = [f.kind for f in exe.functions]
        self.layout = FrameLayout(self.entry.num_registers)
        self.profile = profile  # None, or a callable record(name, seconds, is_kernel)
        self.ns: dict = {"Storage": Storage, "VMError": VMError, "cond": read_if_cond, "Tensor": Tensor}
        self.cache_slots = 0
        self.unchecked = set(self.entry.attrs.get("unchecked_calls", []))
        self.reused_storage, self.reused_tensors, self.reused_heaps = reusable_registers(
            self.entry, self.names, self.kinds)

    # -- helpers ------------------------------------------------------------------------------
    def bind(self, prefix: str, value) -> str:
        name = f"{prefix}{len(self.ns)}"
        self.ns[name] = value
        return name

    def new_cache_slot(self) -> int:
        self.cache_slots += 1
        return self.cache_slots - 1

    def arg(self, a) -> str:
        L = self.layout
        if a.kind == "reg":
            return f"regs[{int(a.value)}]"
        if a.kind == "imm":
            return repr(int(a.value))
        if a.kind == "ctx":
            return f"regs[{L.CTX}]"
        if a.kind == "const":
            return self.bind("c", self.vm.constant(a.value))
        return self.bind("f", self.vm.function_value(a.value))

    # -- instructions -------------------------------------------------------------------------
    def call(self, pc: int, instr: Call) -> list[str]:
        kind, name = self.kinds[instr.func], self.names[instr.func]
        dst = "" if instr.dst == VOID else f"regs[{int(instr.dst)}] = "
        if kind == "kernel":
            lines = self.kernel_call(pc, instr)
        elif kind == "vm":
            fn = self.bind("call", self.vm.callers)
            args = ", ".join(self.arg(a) for a in instr.args)
            lines = [f"{dst}{fn}[{int(instr.func)}]({args})"]
        else:
            lines = self.builtin_call(pc, instr, name, dst)
        if self.profile is not None and kind != "vm":
            rec, label = self.bind("rec", self.profile), self.bind("n", name)
            lines = ["t0 = clock()", *lines, f"{rec}({label}, clock() - t0, {kind == 'kernel'})"]
        return lines

    def builtin_call(self, pc: int, instr: Call, name: str, dst: str) -> list[str]:
        """A builtin call: its rule in `BUILTIN_RULES` where one applies, else a plain call."""
        rule = BUILTIN_RULES.get(name)
        if rule is not None:
            lines = rule(self, pc, instr, dst)
            if lines is not None:
                return lines
        return [f"{dst}{self.plain_call(name, instr.args)}"]

    def plain_call(self, name: str, args) -> str:
        """The text of a call to builtin `name` on `args`, the builtin bound at load time."""
        return f"{self.bind('b', self.vm.builtin(name))}({', '.join(self.arg(a) for a in args)})"

    def kernel_call(self, pc: int, instr: Call, func: int | None = None, args=None,
                    unpack_last: bool = False) -> list[str]:
        """A kernel call; with `unpack_last` (call_tir_dyn) the last argument is a shape whose
        values are the trailing scalar arguments."""
        kernel = self.vm.kernel(instr.func if func is None else func)
        dst = "" if instr.dst == VOID else f"regs[{int(instr.dst)}] = "
        params = kernel.params
        args = list(instr.args if args is None else args)
        expanded: list[str] = [self.arg(a) for a in args]
        if unpack_last and args:
            last = expanded.pop()
            expanded += [f"{last}[{k}]" for k in range(len(params) - len(expanded))]
        if len(expanded) != len(params):
            raise VMError(f"{self.entry.name}, instruction {pc}: kernel {kernel.name} takes {len(params)} "
                          f"arguments, the bytecode passes {len(expanded)}")
        fail = self.bind("fail", kernel.raise_error)
        sources = kernel.sym_var_sources()
        fast = pc in self.unchecked and kernel.address is not None and None not in sources
        if not fast:
            k = self.bind("k", kernel)
            return [f"{k}({', '.join(expanded)})", *([f"{dst}None"] if dst else [])]
        fmt, values = "<", []
        for p, a, text in zip(params, args + [None] * len(params), expanded):
            if p["kind"] == "buffer":
                fmt += "q"
                const = self.vm.constant(a.value) if a is not None and a.kind == "const" else None
                values.append(repr(int(const.data_ptr)) if isinstance(const, Tensor) else f"{text}.data_ptr")
            elif p["dtype"].startswith(("float", "bfloat")):
                fmt += "d"
                values.append(text)
            else:
                fmt += "q"
                values.append(text)
        for index, axis in sources:
            fmt += "q"
            values.append(f"{expanded[index]}.shape[{int(axis)}]")
        if not values:
            fmt += "q"
            values.append("0")
        pack = self.bind("pack", struct.Struct(fmt).pack_into)
        fn = self.bind("fn", kernel._fn)
        L = self.layout
        self.vm.reserve_kernel_slots(struct.calcsize(fmt))
        return [f"{pack}(regs[{L.BUF}], 0, {', '.join(values)})",
                f"rc = {fn}(regs[{L.ADDR}])",
                f"if rc: {fail}(rc)", *([f"{dst}None"] if dst else [])]

    # -- blocks -------------------------------------------------------------------------------
    def decode(self):
        code = self.entry.code
        leaders = {0}
        for pc, instr in enumerate(code):
            if isinstance(instr, Goto):
                leaders.add(pc + instr.offset)
                leaders.add(pc + 1)
            elif isinstance(instr, If):
                leaders.add(pc + 1)
                leaders.add(pc + instr.false_offset)
            elif isinstance(instr, Ret):
                leaders.add(pc + 1)
        starts = sorted(p for p in leaders if p < len(code))
        block_of = {pc: i for i, pc in enumerate(starts)}
        sources = []
        for i, start in enumerate(starts):
            end = starts[i + 1] if i + 1 < len(starts) else len(code)
            lines = []
            terminated = False
            for pc in range(start, end):
                instr = code[pc]
                if isinstance(instr, Call):
                    lines.extend(self.call(pc, instr))
                elif isinstance(instr, Ret):
                    lines += [f"regs[{self.layout.RET}] = {self.arg(instr.result)}", "return -1"]
                    terminated = True
                elif isinstance(instr, Goto):
                    lines.append(f"return {block_of[pc + instr.offset]}")
                    terminated = True
                else:
                    yes, no = block_of[pc + 1], block_of[pc + instr.false_offset]
                    lines.append(f"return {yes} if cond(regs[{int(instr.cond)}]) else {no}")
                    terminated = True
            if not terminated:
                if end >= len(code):
                    raise VMError(f"{self.entry.name}: execution falls off the end of the function")
                lines.append(f"return {block_of[end]}")
            body = "\n".join("    " + line for line in lines)
            sources.append(f"def block{i}(regs):\n{body}\n")
        if self.profile is not None:
            self.ns["clock"] = time.perf_counter
        namespace = dict(self.ns)
        self.source = "\n".join(sources)
        exec(compile(self.source, f"<vm {self.entry.name}>", "exec"), namespace)  # noqa: S102
        return [namespace[f"block{i}"] for i in range(len(starts))], self.cache_slots


# -- builtin rules ----------------------------------------------------------------------------
# How the decoder specialises a call to a builtin, by builtin name. A rule takes the decoder,
# the instruction's index, the instruction and its destination text ("regs[i] = " or "") and
# returns the lines of Python to run instead of the call, or None when it does not apply (then
# the builtin is called as it is).

Rule = Callable[[Decoder, int, Call, str], list[str] | None]


def _null_value(dec: Decoder, pc: int, instr: Call, dst: str) -> list[str]:
    return [f"{dst}None"] if dst else []


def _copy(dec: Decoder, pc: int, instr: Call, dst: str) -> list[str] | None:
    if len(instr.args) != 1:
        return None
    return [f"{dst}{dec.arg(instr.args[0])}"] if dst else []


def _make_tuple(dec: Decoder, pc: int, instr: Call, dst: str) -> list[str]:
    return [f"{dst}({''.join(dec.arg(a) + ', ' for a in instr.args)})"]


def _tuple_getitem(dec: Decoder, pc: int, instr: Call, dst: str) -> list[str] | None:
    args = instr.args
    if len(args) != 2 or args[1].kind != "imm":
        return None
    return [f"{dst}{dec.arg(args[0])}[{int(args[1].value)}]"]


def _call_tir_dyn(dec: Decoder, pc: int, instr: Call, dst: str) -> list[str] | None:
    args = instr.args
    if not args or args[0].kind != "func" or dec.kinds[args[0].value] != "kernel":
        return None
    return dec.kernel_call(pc, instr, args[0].value, args[1:], unpack_last=True)


def _alloc_storage(dec: Decoder, pc: int, instr: Call, dst: str) -> list[str] | None:
    if instr.dst not in dec.reused_storage:
        return None
    cache, ctx, slot = dec.layout.CACHE, dec.layout.CTX, dec.new_cache_slot()
    args = list(instr.args)
    if args and args[0].kind == "ctx":
        args = args[1:]
    size, dev = dec.arg(args[0]), dec.arg(args[1]) if len(args) > 1 else "0"
    return [f"s = regs[{cache}][{slot}]", f"n = {size}[0]",
            f"if s is None or s.nbytes < n: s = regs[{cache}][{slot}] = "
            f"Storage.allocate(n, regs[{ctx}].device({dev}), True)",
            f"{dst}s"]


def _alloc_tensor(dec: Decoder, pc: int, instr: Call, dst: str) -> list[str] | None:
    args = instr.args
    if instr.dst not in dec.reused_tensors or not all(a.kind in ("const", "imm") for a in args[1:]):
        return None
    slot = dec.new_cache_slot()
    storage = dec.arg(args[0])
    rest = ", ".join(dec.arg(a) for a in args[1:])
    return [f"s = {storage}", f"t = s.views.get({slot})",
            f"if t is None: t = s.views[{slot}] = s.view({rest})", f"{dst}t"]


def _alloc_shape_heap(dec: Decoder, pc: int, instr: Call, dst: str) -> list[str] | None:
    if instr.dst not in dec.reused_heaps:
        return None
    cache, slot = dec.layout.CACHE, dec.new_cache_slot()
    call = dec.plain_call("vm.builtin.alloc_shape_heap", instr.args)
    return [f"h = regs[{cache}][{slot}]", f"if h is None: h = regs[{cache}][{slot}] = {call}", f"{dst}h"]


def _make_shape(dec: Decoder, pc: int, instr: Call, dst: str) -> list[str] | None:
    args = instr.args
    kinds = [a.kind for a in args]
    if not dst or kinds[:2] != ["reg", "imm"] or any(k != "imm" for k in kinds[2:]) \
            or len(args) != 2 + 2 * int(args[1].value):
        return None
    dims = []
    for i in range(int(args[1].value)):
        code, value = int(args[2 + 2 * i].value), int(args[3 + 2 * i].value)
        dims.append(repr(value) if code == MakeShapeCode.USE_IMM else f"int(H[{value}])")
    shape = dec.bind("Shape", ShapeTuple)
    return [f"H = {dec.arg(args[0])}._array", f"{dst}{shape}(({''.join(d + ', ' for d in dims)}))"]


# The input checks: the common, passing case as inline code; the builtin reports failures.


def _check_tensor_info(dec: Decoder, pc: int, instr: Call, dst: str) -> list[str] | None:
    args = instr.args
    if dst or [a.kind for a in args] != ["reg", "imm", "const", "const"]:
        return None
    dtype = dec.vm.constant(args[2].value)
    if not isinstance(dtype, str) or dtype == "void":
        return None
    call = dec.plain_call("vm.builtin.check_tensor_info", args)
    ndim, dt = int(args[1].value), dec.bind("dt", str(dtype))
    test = f"v.__class__ is not Tensor or v.dtype != {dt}"
    if ndim >= 0:
        test += f" or v.ndim != {ndim}"
    return [f"v = {dec.arg(args[0])}", f"if {test}: {call}"]


def _match_shape(dec: Decoder, pc: int, instr: Call, dst: str) -> list[str] | None:
    args = instr.args
    kinds = [a.kind for a in args]
    if dst or len(args) < 4 or kinds[:3] != ["reg", "reg", "imm"] or any(k != "imm" for k in kinds[3:-1]) \
            or len(args) != 4 + 2 * int(args[2].value):
        return None
    ndim = int(args[2].value)
    pairs = [(int(args[3 + 2 * axis].value), int(args[4 + 2 * axis].value)) for axis in range(ndim)]
    if any(code not in _MATCH_CODES for code, _ in pairs):
        return None
    call = dec.plain_call("vm.builtin.match_shape", args)
    lines = [f"v = {dec.arg(args[0])}", f"if v.__class__ is not Tensor or v.ndim != {ndim}: {call}",
             "else:", "    sh = v.shape", f"    H = {dec.arg(args[1])}._array"]
    for axis, (code, value) in enumerate(pairs):
        if code == MatchShapeCode.ASSERT_EQUAL_TO_IMM:
            lines.append(f"    if sh[{axis}] != {value}: {call}")
        elif code == MatchShapeCode.STORE_TO_HEAP:
            lines.append(f"    H[{value}] = sh[{axis}]")
        elif code == MatchShapeCode.ASSERT_EQUAL_TO_LOAD:
            lines.append(f"    if sh[{axis}] != H[{value}]: {call}")
    return lines


_MATCH_CODES = frozenset(int(code) for code in MatchShapeCode)

BUILTIN_RULES: dict[str, Rule] = {
    "vm.builtin.null_value": _null_value,
    "vm.builtin.copy": _copy,
    "vm.builtin.make_tuple": _make_tuple,
    "vm.builtin.tuple_getitem": _tuple_getitem,
    "vm.builtin.call_tir_dyn": _call_tir_dyn,
    "vm.builtin.alloc_storage": _alloc_storage,
    "vm.builtin.alloc_tensor": _alloc_tensor,
    "vm.builtin.alloc_shape_heap": _alloc_shape_heap,
    "vm.builtin.make_shape": _make_shape,
    "vm.builtin.check_tensor_info": _check_tensor_info,
    "vm.builtin.match_shape": _match_shape,
}


__all__ = ["BUILTIN_RULES", "Decoder", "DecoderHost", "FrameLayout", "reusable_registers"]
