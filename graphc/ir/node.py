"""The base of every IR node: immutable, identity-compared, rebuilt with `replace`.

Nodes are frozen dataclasses with slots. `replace(**changes)` returns the node itself
when every change is identical to the current value, so a pass can test "did anything
change?" with `is`. `structural_equal` / `structural_hash` compare by structure.
"""

from __future__ import annotations

import dataclasses


class Node:
    """Base class of IR nodes (TensorIR, Relax, modules)."""

    __slots__ = ()

    def replace(self, **changes):
        """A copy with `changes` applied; `self` if every change is the current value."""
        if all(getattr(self, key) is value for key, value in changes.items()):
            return self
        return dataclasses.replace(self, **changes)

    def same_as(self, other) -> bool:
        """Identity comparison, as TVM's `same_as`."""
        return self is other

    def script(self, **kwargs) -> str:
        """This node printed in graphc's script syntax."""
        from ..script.printer import script

        return script(self, **kwargs)

    def show(self, **kwargs) -> None:
        """Print `script()`, highlighted when printing to a terminal."""
        from ..script.printer import show

        show(self, **kwargs)

    def __str__(self) -> str:
        return self.script()


def repr_text(node: Node) -> str:
    """`repr(node)` for IR nodes that print as script text (through graphc.script, at call time)."""
    from ..script.printer import repr_text as printed

    return printed(node)


def node(cls):
    """Decorate an IR node class: a frozen, slotted dataclass compared by identity."""
    return dataclasses.dataclass(frozen=True, eq=False, slots=True, repr=False)(cls)
