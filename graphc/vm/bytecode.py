"""The VM's instruction set: four instructions over registers, and the function table entries.

A VM function is a register machine program: registers `0 .. num_params-1` hold the
arguments; every other value lives in a register written once by a `Call`. An argument of
a `Call` is an `Arg`: a register, a constant-pool index, an immediate int, a function-table
index, or the VM context (for builtins that allocate or read the devices).

    Call(dst, func, args)   dst = function_table[func](*args)    (dst VOID: result dropped)
    Ret(result)             return the value of Arg `result`
    Goto(offset)            pc += offset
    If(cond, false_offset)  pc += 1 if register `cond` is true, else pc += false_offset

>>> code = [Call(1, 0, (Arg.reg(0), Arg.imm(2))), Ret(Arg.reg(1))]
>>> print(format_code(code, ["vm.builtin.tuple_getitem"], []))
   0: %1 = call vm.builtin.tuple_getitem(%0, i2)
   1: ret %1
"""

from __future__ import annotations

from dataclasses import dataclass, field

VOID = -1  # the destination register of a call whose result is not used


class Arg:
    """One call argument: `kind` is "reg", "const", "imm", "func" or "ctx"; `value` an int."""

    __slots__ = ("kind", "value")
    KINDS = ("reg", "const", "imm", "func", "ctx")

    def __init__(self, kind: str, value: int = 0):
        if kind not in self.KINDS:
            raise ValueError(f"unknown argument kind {kind!r}; expected one of {self.KINDS}")
        self.kind = kind
        self.value = value

    @classmethod
    def reg(cls, index: int) -> Arg:
        return cls("reg", index)

    @classmethod
    def const(cls, index: int) -> Arg:
        return cls("const", index)

    @classmethod
    def imm(cls, value: int) -> Arg:
        return cls("imm", value)

    @classmethod
    def func(cls, index: int) -> Arg:
        return cls("func", index)

    @classmethod
    def ctx(cls) -> Arg:
        return cls("ctx", 0)

    def __eq__(self, other) -> bool:
        return isinstance(other, Arg) and (self.kind, self.value) == (other.kind, other.value)

    def __hash__(self) -> int:
        return hash((self.kind, self.value))

    def __repr__(self) -> str:
        return f"Arg.{self.kind}({self.value})"

    def to_json(self) -> list:
        return [self.KINDS.index(self.kind), self.value]

    @classmethod
    def from_json(cls, data) -> Arg:
        kind, value = data
        if not isinstance(kind, int) or not 0 <= kind < len(cls.KINDS) or not isinstance(value, int):
            raise ValueError(f"malformed instruction argument {data!r}")
        return cls(cls.KINDS[kind], value)


@dataclass(frozen=True, slots=True)
class Call:
    """`dst = func(*args)`; `func` indexes the function table."""

    dst: int
    func: int
    args: tuple


@dataclass(frozen=True, slots=True)
class Ret:
    """Return `result` (an Arg) to the caller."""

    result: Arg


@dataclass(frozen=True, slots=True)
class Goto:
    """Continue at `pc + offset`."""

    offset: int


@dataclass(frozen=True, slots=True)
class If:
    """Continue at `pc + 1` when register `cond` holds a true value, else at `pc + false_offset`."""

    cond: int
    false_offset: int


Instruction = Call | Ret | Goto | If


def instruction_to_json(instr: Instruction) -> list:
    if isinstance(instr, Call):
        return ["call", instr.dst, instr.func, [a.to_json() for a in instr.args]]
    if isinstance(instr, Ret):
        return ["ret", instr.result.to_json()]
    if isinstance(instr, Goto):
        return ["goto", instr.offset]
    return ["if", instr.cond, instr.false_offset]


def instruction_from_json(data) -> Instruction:
    op = data[0]
    if op == "call":
        return Call(int(data[1]), int(data[2]), tuple(Arg.from_json(a) for a in data[3]))
    if op == "ret":
        return Ret(Arg.from_json(data[1]))
    if op == "goto":
        return Goto(int(data[1]))
    if op == "if":
        return If(int(data[1]), int(data[2]))
    raise ValueError(f"unknown instruction {op!r}")


@dataclass
class FuncEntry:
    """One function-table entry.

    `kind` is "vm" (a Relax function compiled to bytecode), "kernel" (a compiled PrimFunc,
    run on `device`, a device type such as "cpu") or "builtin" (a runtime function looked up
    by name). VM functions also carry their parameter names, register count and code.
    """

    kind: str
    name: str
    params: list = field(default_factory=list)
    num_registers: int = 0
    code: list = field(default_factory=list)
    device: str = "cpu"
    attrs: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        data = {"kind": self.kind, "name": self.name}
        if self.kind == "vm":
            data.update(params=list(self.params), num_registers=self.num_registers,
                        code=[instruction_to_json(i) for i in self.code], attrs=self.attrs)
        elif self.kind == "kernel":
            data["device"] = self.device
        return data

    @classmethod
    def from_json(cls, data: dict) -> FuncEntry:
        code = [instruction_from_json(i) for i in data.get("code", [])]
        return cls(str(data["kind"]), str(data["name"]), list(data.get("params", [])),
                   int(data.get("num_registers", 0)), code, str(data.get("device", "cpu")),
                   dict(data.get("attrs", {})))


def format_arg(arg: Arg, names: list[str], constants: list) -> str:
    if arg.kind == "reg":
        return f"%{arg.value}"
    if arg.kind == "imm":
        return f"i{arg.value}"
    if arg.kind == "func":
        return f"@{names[arg.value]}" if 0 <= arg.value < len(names) else f"@<{arg.value}>"
    if arg.kind == "ctx":
        return "%vm"
    return f"c[{arg.value}]"


def format_code(code: list, names: list[str], constants: list) -> str:
    """The instructions of one VM function, one per line, with the program counter."""
    lines = []
    for pc, instr in enumerate(code):
        if isinstance(instr, Call):
            args = ", ".join(format_arg(a, names, constants) for a in instr.args)
            dst = "" if instr.dst == VOID else f"%{instr.dst} = "
            lines.append(f"{pc:4d}: {dst}call {names[instr.func]}({args})")
        elif isinstance(instr, Ret):
            lines.append(f"{pc:4d}: ret {format_arg(instr.result, names, constants)}")
        elif isinstance(instr, Goto):
            lines.append(f"{pc:4d}: goto {pc + instr.offset}")
        else:
            lines.append(f"{pc:4d}: if %{instr.cond} else goto {pc + instr.false_offset}")
    return "\n".join(lines)


__all__ = ["VOID", "Arg", "Call", "FuncEntry", "Goto", "If", "Instruction", "Ret", "format_code"]
