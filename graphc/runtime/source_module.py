"""`CSourceModule`: what `graphc.build(mod, target="c")` returns: C source, and code to run.

`get_source()` gives the C99 source of every function, with the runtime's calling convention
(`int32_t name(int64_t *slots)`, see docs/codegen.md), for any C compiler. Nothing at run time
needs one: the same functions, compiled by the LLVM back end, are what `lib["name"](...)` runs.

>>> from graphc.runtime.module import Module
>>> lib = CSourceModule(Module(b"", [], {"str": "llvm"}, "", load=False), "int x;")
>>> lib.get_source(), lib.type_key
('int x;', 'c')
"""

from __future__ import annotations

import json
import struct

from ..errors import GraphcError
from .module import Module, RuntimeModule

MAGIC = b"GRAPHCCSRC1"


class CSourceModule(RuntimeModule):
    """C source of compiled functions, callable through their LLVM-compiled twins."""

    type_key = "c"

    def __init__(self, compiled: Module, source: str):
        self.compiled = compiled
        self.source = source
        self.imported_modules: list = []
        self.functions = compiled.functions

    def get_source(self, fmt: str = "c") -> str:
        """The C source ("c", ""); "ll"/"asm" give the LLVM-compiled twin's IR or assembly."""
        if fmt in ("c", "", "cc"):
            return self.source
        return self.compiled.get_source(fmt)

    def get_function(self, name: str):
        return self.compiled.get_function(name)

    def __repr__(self) -> str:
        return f"<graphc.runtime.CSourceModule: {', '.join(self.functions)}>"

    def to_bytes(self) -> bytes:
        header = json.dumps({"source": self.source}).encode()
        return MAGIC + struct.pack("<Q", len(header)) + header + self.compiled.to_bytes()

    @staticmethod
    def from_bytes(data: bytes) -> CSourceModule:
        if not data.startswith(MAGIC):
            raise GraphcError("not a graphc C source module: bad magic bytes")
        (size,) = struct.unpack_from("<Q", data, len(MAGIC))
        start = len(MAGIC) + 8
        header = json.loads(data[start:start + size])
        return CSourceModule(Module.from_bytes(data[start + size:]), header["source"])


__all__ = ["MAGIC", "CSourceModule"]
