"""Source text of a parsed script and the errors that point into it.

A ScriptError names the file (or "<string>"), line and column, shows the source line and
puts carets under the offending part.

>>> import ast
>>> src = Source("x = foo(1)\\n")
>>> call = ast.parse(src.text).body[0].value
>>> print(src.error(call, "unknown name 'foo'"))
<string>:1:5: error: unknown name 'foo'
    x = foo(1)
        ^^^^^^
"""

from __future__ import annotations

import ast
import textwrap

from ...errors import ScriptError


class Source:
    """Dedented script text plus what is needed to report positions in the original file."""

    def __init__(self, text: str, filename: str = "<string>", first_line: int = 1):
        self.raw_lines = text.split("\n")
        self.text = textwrap.dedent(text)
        dedented = self.text.split("\n")
        self.indent = 0
        for raw, new in zip(self.raw_lines, dedented):
            if new.strip():
                self.indent = len(raw) - len(new)
                break
        self.filename = filename
        self.first_line = first_line

    def parse(self) -> ast.Module:
        try:
            return ast.parse(self.text)
        except SyntaxError as err:
            line = (err.lineno or 1) + self.first_line - 1
            shown = self.raw_lines[(err.lineno or 1) - 1] if err.lineno else ""
            raise ScriptError(f"{self.filename}:{line}:{err.offset or 0}: error: invalid Python syntax: "
                              f"{err.msg}\n    {shown.strip()}") from None

    def error(self, node, message: str) -> ScriptError:
        """A ScriptError at `node` (an ast node) saying `message`."""
        lineno = getattr(node, "lineno", 1)
        col = getattr(node, "col_offset", 0) + self.indent
        end_line = getattr(node, "end_lineno", lineno)
        end_col = getattr(node, "end_col_offset", None)
        raw = self.raw_lines[lineno - 1] if 0 < lineno <= len(self.raw_lines) else ""
        if end_col is None or end_line != lineno:
            end = len(raw.rstrip())
        else:
            end = end_col + self.indent
        strip = len(raw) - len(raw.lstrip())
        caret = " " * (col - strip) + "^" * max(1, end - col)
        where = f"{self.filename}:{lineno + self.first_line - 1}:{col + 1}"
        return ScriptError(f"{where}: error: {message}\n    {raw.strip()}\n    {caret}")
