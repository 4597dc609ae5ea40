"""`Executable`: bytecode, constants and compiled kernels, and the one-file format that saves them.

The file is: magic (8 bytes), format version (u32), payload length (u64), SHA-256 of the
payload (32 bytes), payload. The payload is a JSON header (function table with bytecode,
constant pool descriptions, kernel modules, virtual devices) followed by raw blobs (tensor
constants' bytes and each kernel module's object code). Loading checks all of it before
anything runs, and executes no code from the file except the compiled kernels.

>>> from graphc.vm.bytecode import Arg, FuncEntry, Ret
>>> exe = Executable([FuncEntry("vm", "main", ["x"], 1, [Ret(Arg.reg(0))])], [])
>>> Executable.from_bytes(exe.to_bytes()).as_text().splitlines()[0]
'@main(x)  # 1 registers'
"""

from __future__ import annotations

import hashlib
import json
import struct

import numpy as np

from ..errors import GraphcError
from ..runtime.device import Device, cpu
from ..runtime.module import register_loader
from ..runtime.tensor import Tensor, tensor
from .bytecode import VOID, Arg, Call, FuncEntry, Goto, If, Ret, format_code
from .outputs import ATTR as OUTPUT_STRUCTURE
from .outputs import validate as validate_structure
from .values import DataType, ShapeTuple

MAGIC = b"GRAPHCVM"
FORMAT_VERSION = 1
_PREFIX = struct.Struct("<8sIQ32s")
_MAX_REGISTERS = 1 << 24


class ExecutableFormatError(GraphcError, ValueError):
    """A file or byte string is not a valid graphc executable (truncated, corrupted, wrong version)."""


class Executable:
    """A compiled Relax module: function table, constant pool, kernel modules and devices.

    `functions` is the function table (`FuncEntry`: VM functions, kernels, builtins);
    `constants` the constant pool (tensors, shapes, strings, data types, numbers);
    `modules` maps a device type ("cpu") to the `graphc.runtime.Module` holding its kernels;
    `virtual_devices` the devices the memory plan refers to by index.
    """

    def __init__(self, functions: list[FuncEntry], constants: list, modules: dict | None = None,
                 virtual_devices: list[Device] | None = None):
        self.functions = list(functions)
        self.constants = list(constants)
        self.modules = dict(modules or {})
        self.virtual_devices = list(virtual_devices or [cpu(0)])
        self.func_index = {f.name: i for i, f in enumerate(self.functions) if f.kind == "vm"}
        self._vm = None  # the VirtualMachine `exe(...)` runs on, made on first call
        self.validate()

    def __call__(self, *inputs):
        """Run "main" on `inputs`, as `torch.compile`'s result is called: `graphc.compile(model)(x)`.

        The first call makes a `VirtualMachine` on the device the executable was compiled for
        (use `relax.VirtualMachine(exe, device)` directly for another device, for profiling
        or for the other functions); the result is `vm["main"](*inputs)`'s.
        """
        vm = self._vm
        if vm is None:
            from .vm import VirtualMachine  # the VM module builds on this one

            vm = self._vm = VirtualMachine(self, self.virtual_devices[0])
        return vm["main"](*inputs)

    # -- inspection ---------------------------------------------------------------------------
    @property
    def function_names(self) -> list[str]:
        """The names of the VM (Relax) functions, callable through a VirtualMachine."""
        return [f.name for f in self.functions if f.kind == "vm"]

    def __contains__(self, name) -> bool:
        return name in self.func_index

    def as_text(self) -> str:
        """The bytecode of every VM function, readably; kernels and builtins by name."""
        names = [f.name for f in self.functions]
        parts = []
        for f in self.functions:
            if f.kind != "vm":
                continue
            parts.append(f"@{f.name}({', '.join(f.params)})  # {f.num_registers} registers\n"
                         + format_code(f.code, names, self.constants))
        consts = "\n".join(f"  c[{i}] = {_const_text(c)}" for i, c in enumerate(self.constants))
        table = "\n".join(f"  [{i}] {f.kind} {f.name}" + (f" on {f.device}" if f.kind == "kernel" else "")
                          for i, f in enumerate(self.functions))
        return "\n\n".join(parts + [f"constants:\n{consts or '  (none)'}", f"function table:\n{table}"])

    def stats(self) -> str:
        """A summary: functions, instructions, kernels, constants and the static memory plan."""
        vm_funcs = [f for f in self.functions if f.kind == "vm"]
        kernels = [f for f in self.functions if f.kind == "kernel"]
        builtins = [f for f in self.functions if f.kind == "builtin"]
        tensors = [c for c in self.constants if isinstance(c, Tensor)]
        lines = [
            f"VM functions: {len(vm_funcs)} ({', '.join(f.name for f in vm_funcs)})",
            f"instructions: {sum(len(f.code) for f in vm_funcs)}",
            f"registers: {', '.join(f'{f.name}={f.num_registers}' for f in vm_funcs)}",
            f"kernels: {len(kernels)}",
            f"builtins: {len(builtins)} ({', '.join(f.name for f in builtins)})",
            f"constants: {len(self.constants)} ({len(tensors)} tensors, "
            f"{sum(t.nbytes for t in tensors)} bytes)",
            f"static storage: {self.storage_bytes()} bytes in {self.num_storage_allocations()} allocations",
            f"devices: {', '.join(str(d) for d in self.virtual_devices)}",
        ]
        return "\n".join(lines)

    def _storage_calls(self):
        for f in self.functions:
            if f.kind != "vm":
                continue
            for instr in f.code:
                if isinstance(instr, Call) and self.functions[instr.func].name == "vm.builtin.alloc_storage":
                    yield instr

    def num_storage_allocations(self) -> int:
        """How many `alloc_storage` instructions the bytecode has (one per storage of the plan)."""
        return sum(1 for _ in self._storage_calls())

    def storage_bytes(self) -> int:
        """Total bytes of the statically sized storage the bytecode allocates (the memory plan)."""
        total = 0
        for instr in self._storage_calls():
            size = instr.args[1] if instr.args and instr.args[0].kind == "ctx" else instr.args[0]
            if size.kind == "const" and isinstance(self.constants[size.value], tuple):
                total += int(self.constants[size.value][0])
        return total

    # -- validation --------------------------------------------------------------------------
    def validate(self) -> None:
        """Check that every index in the bytecode is in range (raises ExecutableFormatError)."""
        nfunc, nconst = len(self.functions), len(self.constants)
        for f in self.functions:
            if f.kind not in ("vm", "kernel", "builtin"):
                _bad(f"function {f.name!r} has unknown kind {f.kind!r}")
            if f.kind != "vm":
                continue
            nreg = f.num_registers
            if not isinstance(nreg, int) or not 0 <= nreg <= _MAX_REGISTERS:
                _bad(f"function {f.name!r} has an invalid register count {nreg!r}")
            if len(f.params) > nreg:
                _bad(f"function {f.name!r} has {len(f.params)} parameters but {nreg} registers")
            if not f.code:
                _bad(f"function {f.name!r} has no instructions")

            def check_arg(arg: Arg, pc: int, f=f, nreg=nreg) -> None:
                limit = {"reg": nreg, "const": nconst, "func": nfunc}.get(arg.kind)
                if limit is not None and not 0 <= arg.value < limit:
                    _bad(f"{f.name}, instruction {pc}: {arg.kind} index {arg.value} out of range "
                         f"[0, {limit})")

            for pc, instr in enumerate(f.code):
                if isinstance(instr, Call):
                    if not 0 <= instr.func < nfunc:
                        _bad(f"{f.name}, instruction {pc}: function index {instr.func} out of range")
                    if instr.dst != VOID and not 0 <= instr.dst < nreg:
                        _bad(f"{f.name}, instruction {pc}: register {instr.dst} out of range")
                    for a in instr.args:
                        check_arg(a, pc)
                elif isinstance(instr, Ret):
                    check_arg(instr.result, pc)
                else:
                    offset = instr.offset if isinstance(instr, Goto) else instr.false_offset
                    if isinstance(instr, If) and not 0 <= instr.cond < nreg:
                        _bad(f"{f.name}, instruction {pc}: register {instr.cond} out of range")
                    if not 0 <= pc + offset < len(f.code) or offset == 0:
                        _bad(f"{f.name}, instruction {pc}: jump to {pc + offset} outside the function")
            if not isinstance(f.code[-1], Ret | Goto):
                _bad(f"function {f.name!r} does not end with ret or goto")
            if OUTPUT_STRUCTURE in f.attrs:
                try:
                    validate_structure(f.attrs[OUTPUT_STRUCTURE], f"function {f.name!r}")
                except ValueError as err:
                    _bad(str(err))

    # -- serialisation -----------------------------------------------------------------------
    def to_bytes(self) -> bytes:
        blobs: list[bytes] = []

        def blob(data: bytes) -> int:
            blobs.append(bytes(data))
            return len(blobs) - 1

        constants = [_encode_const(c, blob) for c in self.constants]
        modules = {dev: blob(mod.to_bytes()) for dev, mod in self.modules.items()}
        offsets, pos = [], 0
        for b in blobs:
            offsets.append([pos, len(b)])
            pos += len(b)
        header = json.dumps({
            "functions": [f.to_json() for f in self.functions],
            "constants": constants,
            "modules": modules,
            "virtual_devices": [[d.device_type, d.index] for d in self.virtual_devices],
            "blobs": offsets,
        }, allow_nan=True).encode()
        payload = struct.pack("<Q", len(header)) + header + b"".join(blobs)
        return _PREFIX.pack(MAGIC, FORMAT_VERSION, len(payload), hashlib.sha256(payload).digest()) + payload

    @classmethod
    def from_bytes(cls, data: bytes, where: str = "data") -> Executable:
        data = bytes(data)
        if len(data) < _PREFIX.size:
            if not data.startswith(MAGIC[:len(data)]) or not data:
                _bad(f"{where} is not a graphc executable (bad magic bytes)")
            _bad(f"{where} is truncated: {len(data)} bytes, shorter than the {_PREFIX.size}-byte header")
        magic, version, size, digest = _PREFIX.unpack_from(data)
        if magic != MAGIC:
            _bad(f"{where} is not a graphc executable (bad magic bytes {magic!r})")
        if version != FORMAT_VERSION:
            _bad(f"{where} has executable format version {version}; this graphc reads version "
                 f"{FORMAT_VERSION}: recompile the model with this graphc")
        payload = data[_PREFIX.size:]
        if len(payload) < size:
            _bad(f"{where} is truncated: the header announces {size} bytes of payload, found {len(payload)}")
        if len(payload) > size:
            _bad(f"{where} is corrupted: {len(payload) - size} unexpected bytes after the payload")
        if hashlib.sha256(payload).digest() != digest:
            _bad(f"{where} is corrupted: its checksum does not match its contents")
        try:
            (hlen,) = struct.unpack_from("<Q", payload)
            header = json.loads(payload[8:8 + hlen])
            base = 8 + hlen
            blobs = [payload[base + off: base + off + n] for off, n in header["blobs"]]
            constants = [_decode_const(c, blobs) for c in header["constants"]]
            functions = [FuncEntry.from_json(f) for f in header["functions"]]
            devices = [Device(t, i) for t, i in header["virtual_devices"]]
            module_blobs = {dev: blobs[i] for dev, i in header["modules"].items()}
        except (KeyError, IndexError, TypeError, ValueError, struct.error) as err:
            if isinstance(err, ExecutableFormatError):
                raise
            raise ExecutableFormatError(f"{where} is malformed: {err}") from err
        from ..runtime.module import Module

        modules = {dev: Module.from_bytes(b) for dev, b in module_blobs.items()}
        return cls(functions, constants, modules, devices)

    def export_library(self, path) -> None:
        """Write this executable to one file at `path` (load it with `Executable.load`)."""
        with open(path, "wb") as f:
            f.write(self.to_bytes())

    save = export_library

    @classmethod
    def load(cls, path) -> Executable:
        """Read an executable written by `export_library` (no compilation happens)."""
        with open(path, "rb") as f:
            data = f.read()
        return cls.from_bytes(data, where=f"file {str(path)!r}")

    def __repr__(self) -> str:
        return f"<graphc.vm.Executable: {', '.join(self.function_names)}>"


def _bad(message: str):
    raise ExecutableFormatError(message)


def _const_text(c) -> str:
    if isinstance(c, Tensor):
        return f"tensor(shape={c.shape}, dtype={c.dtype}, device={c.device})"
    return repr(c)


def _encode_const(c, blob) -> dict:
    if isinstance(c, Tensor):
        return {"t": "tensor", "dtype": c.dtype, "shape": list(c.shape),
                "device": [c.device.device_type, c.device.index],
                "blob": blob(np.ascontiguousarray(c.numpy()).tobytes())}
    if isinstance(c, ShapeTuple):
        return {"t": "shape", "v": [int(d) for d in c]}
    if isinstance(c, DataType):
        return {"t": "dtype", "v": str(c)}
    if isinstance(c, str):
        return {"t": "str", "v": c}
    if isinstance(c, bool):
        return {"t": "bool", "v": c}
    if isinstance(c, int):
        return {"t": "int", "v": c}
    if isinstance(c, float):
        return {"t": "float", "v": c}
    if c is None:
        return {"t": "none"}
    raise TypeError(f"cannot save a constant of type {type(c).__name__} in an executable")


def _decode_const(data: dict, blobs: list):
    kind = data["t"]
    if kind == "tensor":
        from ..runtime.tensor import _canonical_dtype

        dtype, np_dtype = _canonical_dtype(data["dtype"], "executable constant")
        shape = tuple(int(d) for d in data["shape"])
        raw = blobs[data["blob"]]
        size = np_dtype.itemsize * int(np.prod(shape, dtype=np.int64))
        if len(raw) != size:
            _bad(f"tensor constant of shape {shape} and dtype {dtype} has {len(raw)} bytes, expected {size}")
        array = np.frombuffer(raw, dtype=np_dtype).reshape(shape)
        return tensor(array, cpu(), dtype)  # placed on the VM's device when a VM loads it
    if kind == "shape":
        return ShapeTuple(int(d) for d in data["v"])
    if kind == "dtype":
        return DataType(data["v"])
    if kind == "str":
        return str(data["v"])
    if kind == "bool":
        return bool(data["v"])
    if kind == "int":
        return int(data["v"])
    if kind == "float":
        return float(data["v"])
    if kind == "none":
        return None
    _bad(f"unknown constant kind {kind!r}")


register_loader(MAGIC, lambda data, where: Executable.from_bytes(data, where=where))

__all__ = ["FORMAT_VERSION", "Executable", "ExecutableFormatError"]
