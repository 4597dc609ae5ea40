"""The one place where printed names are chosen: unique, valid Python identifiers.

Every variable and buffer gets its name when the printer reaches its definition;
later uses look it up. Two different objects named `i` print as `i` and `i_1`.

>>> from graphc import tir
>>> namer = Namer()
>>> a, b = tir.Var("i"), tir.Var("i")
>>> namer.define(a), namer.define(b), namer.get(a)
('i', 'i_1', 'i')
"""

from __future__ import annotations

import keyword
import re

# Names the printed script itself uses; a variable must not shadow them.
_RESERVED = {"T", "I", "R", "range", "True", "False", "None", "int", "float", "bool"}


def sanitize(name: str) -> str:
    """`name` turned into a valid identifier ("threadIdx.x" -> "threadIdx_x")."""
    name = re.sub(r"\W", "_", name or "v")
    if not name or name[0].isdigit():
        name = "v_" + name
    if keyword.iskeyword(name) or name in _RESERVED:
        name = name + "_1"
    return name


class Namer:
    """Maps IR objects (by identity) to unique printed names."""

    def __init__(self):
        self.names: dict[int, str] = {}
        self.used: set[str] = set()
        self.keep: list = []  # keep objects alive so ids stay unique

    def define(self, obj, hint: str | None = None) -> str:
        """Give `obj` a fresh name based on `hint` (default: its own name)."""
        base = sanitize(hint if hint is not None else getattr(obj, "name", None) or "v")
        name, k = base, 0
        while name in self.used:
            k += 1
            name = f"{base}_{k}"
        self.used.add(name)
        self.names[id(obj)] = name
        self.keep.append(obj)
        return name

    def release(self, obj) -> None:
        """`obj`'s scope ended: its name may be given again (sibling loops reuse `i0`, like TVM)."""
        name = self.names.get(id(obj))
        if name is not None:
            self.used.discard(name)

    def alias(self, obj, text: str) -> None:
        """Print `obj` as the expression `text` (e.g. a buffer's data as `A.data`)."""
        self.names[id(obj)] = text
        self.keep.append(obj)

    def get(self, obj) -> str | None:
        return self.names.get(id(obj))

    def __contains__(self, obj) -> bool:
        return id(obj) in self.names
