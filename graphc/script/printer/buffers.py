"""Printing buffer declarations: `T.Buffer(...)`, `T.alloc_buffer(...)`, `T.match_buffer(...)`.

Only fields that differ from the defaults print. A buffer's `data` prints as `A.data` when
the buffer owns it, so views (`T.Buffer((n,), "float32", data=A.data)`) share it visibly.
View buffers that no statement declares print as soon as everything they mention is named.

>>> from graphc import tir
>>> from graphc.script.printer.tir import StmtPrinter
>>> A = tir.decl_buffer((4, 8), "float16", "A", scope="shared")
>>> StmtPrinter().buffer_call("T.alloc_buffer", A)
'T.alloc_buffer((4, 8), "float16", scope="shared")'
"""

from __future__ import annotations

from ...tir.buffer import DEFAULT_ALIGNMENT
from .expr import pystr


class BufferPrinterMixin:
    """Buffer-related printing for StmtPrinter (needs `namer`, `expr`, `line`, `pending_views`)."""

    defined_vars: set = frozenset()

    def shape_text(self, dims) -> str:
        texts = [self.expr(d) for d in dims]
        return f"({texts[0]},)" if len(texts) == 1 else f"({', '.join(texts)})"

    def buffer_call(self, fn: str, buf, first: str | None = None, data: bool = True) -> str:
        """`fn(first, shape, dtype, <non-default fields>)` for `buf`."""
        args = [first] if first is not None else []
        args.append(self.shape_text(buf.shape))
        if buf.dtype != "float32" or fn != "T.alloc_buffer":  # TVM omits alloc_buffer's default dtype
            args.append(pystr(buf.dtype))
        data_name = self.namer.get(buf.data)
        if data and data_name is not None:
            args.append(f"data={data_name}")
        if buf.strides:
            args.append(f"strides={self.shape_text(buf.strides)}")
        if buf.elem_offset is not None:
            args.append(f"elem_offset={self.expr(buf.elem_offset)}")
        if buf.scope != "global":
            args.append(f"scope={pystr(buf.scope)}")
        if buf.data_alignment != DEFAULT_ALIGNMENT:
            args.append(f"align={buf.data_alignment}")
        if buf.offset_factor != 1:
            args.append(f"offset_factor={buf.offset_factor}")
        if buf.axis_separators:
            args.append(f"axis_separators={list(buf.axis_separators)!r}")
        return f"{fn}({', '.join(args)})"

    def simple_param_buffer(self, buf) -> bool:
        """True when `buf` can print as a parameter annotation (nothing symbolic in it)."""
        from .scan import _Scanner

        sc = _Scanner()
        sc.walk((buf.shape, buf.strides, buf.elem_offset))
        return not sc.used_vars

    def define_buffer(self, buf) -> str:
        """Name `buf` (and its data, when nothing named that yet)."""
        name = self.namer.define(buf)
        if buf.data not in self.namer:
            self.namer.alias(buf.data, f"{name}.data")
        return name

    def _ready(self, buf) -> bool:
        from .scan import _Scanner

        if buf.data not in self.namer and id(buf.data) in self.defined_vars:
            return False
        sc = _Scanner()
        sc.walk((buf.shape, buf.strides, buf.elem_offset))
        return all(v in self.namer for v in sc.used_vars)

    def flush_views(self) -> None:
        """Print every pending view buffer whose data and dimensions are now named."""
        progress = True
        while progress and self.pending_views:
            progress = False
            for buf in list(self.pending_views):
                if self._ready(buf):
                    self.pending_views.remove(buf)
                    call = self.buffer_call("T.Buffer", buf)
                    self.line(f"{self.define_buffer(buf)} = {call}")
                    progress = True
