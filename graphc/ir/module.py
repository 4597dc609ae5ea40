"""IRModule: the unit every pass consumes and produces, functions keyed by GlobalVar."""

from __future__ import annotations

import json
from collections.abc import Iterator

from .node import Node, node


@node
class GlobalVar(Node):
    """A module-level name that calls and module look-ups refer to.

    `struct_info` is the struct info of the function bound to it in the last module it was
    added to (as in TVM); structural equality compares GlobalVars by name only.
    """

    name_hint: str
    struct_info_: object = None

    @property
    def struct_info(self):
        if self.struct_info_ is None:
            raise AttributeError(f"GlobalVar {self.name_hint!r} has no struct info: it is not bound to a "
                                 "Relax function in a module")
        return self.struct_info_

    def __repr__(self) -> str:
        return f"I.GlobalVar({json.dumps(self.name_hint)})"  # TVM prints double quotes


@node
class DummyGlobalInfo(Node):
    """A global info that carries nothing (`I.dummy_global_info()`), as in TVM."""

    def __repr__(self) -> str:
        return "I.dummy_global_info()"


class IRModule:
    """A collection of functions (PrimFuncs, later Relax functions) plus module attributes.

    >>> from graphc import tir
    >>> mod = IRModule({"main": tir.PrimFunc([], tir.Evaluate(0))})
    >>> [gv.name_hint for gv in mod.get_global_vars()]
    ['main']
    """

    __slots__ = ("functions", "attrs", "global_infos", "_by_name")

    def __init__(self, functions=None, attrs=None, global_infos=None):
        self.functions: dict[GlobalVar, object] = {}
        self._by_name: dict[str, GlobalVar] = {}
        self.attrs: dict = dict(attrs or {})
        self.global_infos: dict[str, list] = {k: list(v) for k, v in (global_infos or {}).items()}
        for key, func in (functions or {}).items():
            self[key] = func

    # -- look-up -------------------------------------------------------------------------
    def get_global_var(self, name: str) -> GlobalVar:
        try:
            return self._by_name[name]
        except KeyError:
            names = ", ".join(sorted(self._by_name)) or "none"
            raise KeyError(f"IRModule has no function named {name!r} (it has: {names})") from None

    def get_global_vars(self) -> list[GlobalVar]:
        return sorted(self.functions, key=lambda gv: gv.name_hint)

    def _key(self, key) -> GlobalVar:
        if isinstance(key, GlobalVar):
            if key not in self.functions and key.name_hint in self._by_name:
                return self._by_name[key.name_hint]
            return key
        if isinstance(key, str):
            return self.get_global_var(key)
        raise TypeError(f"IRModule keys are names or GlobalVars, not {type(key).__name__}")

    def __getitem__(self, key):
        gv = self._key(key)
        if gv not in self.functions:
            raise KeyError(f"IRModule has no function {gv.name_hint!r}")
        return self.functions[gv]

    def __setitem__(self, key, func) -> None:
        if isinstance(key, str):
            gv = self._by_name.get(key) or GlobalVar(key)
        elif isinstance(key, GlobalVar):
            gv = self._by_name.get(key.name_hint, key)
        else:
            raise TypeError(f"IRModule keys are names or GlobalVars, not {type(key).__name__}")
        self.functions[gv] = func
        self._by_name[gv.name_hint] = gv
        sinfo = getattr(func, "struct_info", None)
        if sinfo is not None:
            object.__setattr__(gv, "struct_info_", sinfo)

    def __delitem__(self, key) -> None:
        gv = self._key(key)
        del self.functions[gv]
        del self._by_name[gv.name_hint]

    def __contains__(self, key) -> bool:
        if isinstance(key, str):
            return key in self._by_name
        return key in self.functions

    def __iter__(self) -> Iterator[GlobalVar]:
        return iter(self.get_global_vars())

    def __len__(self) -> int:
        return len(self.functions)

    def items(self):
        return [(gv, self.functions[gv]) for gv in self.get_global_vars()]

    def update_func(self, gv, func) -> None:
        """Replace the function bound to `gv` (a GlobalVar or a name)."""
        self[gv] = func

    def update(self, other: IRModule) -> None:
        for gv, func in other.functions.items():
            self[gv] = func

    def copy(self) -> IRModule:
        new = IRModule(attrs=self.attrs, global_infos=self.global_infos)
        for gv, func in self.functions.items():
            new[gv] = func
        return new

    def with_attr(self, key: str, value) -> IRModule:
        new = self.copy()
        new.attrs[key] = value
        return new

    def with_attrs(self, attrs: dict) -> IRModule:
        """A copy with every attribute of `attrs` set (TVM's `IRModule.with_attrs`)."""
        new = self.copy()
        new.attrs.update(attrs)
        return new

    def update_global_info(self, name: str, infos) -> None:
        """Set the module's global infos under `name` (`I.module_global_infos({name: [...]})`)."""
        self.global_infos[name] = list(infos)

    def get_attr(self, key: str, default=None):
        return self.attrs.get(key, default)

    # -- printing ------------------------------------------------------------------------
    def script(self, **kwargs) -> str:
        from ..script.printer import script

        return script(self, **kwargs)

    def show(self, **kwargs) -> None:
        from ..script.printer import show

        show(self, **kwargs)

    def __str__(self) -> str:
        return self.script()

    def __repr__(self) -> str:
        names = ", ".join(gv.name_hint for gv in self.get_global_vars())
        return f"<IRModule functions=[{names}]>"

    @staticmethod
    def from_expr(func, name: str = "main") -> IRModule:
        return IRModule({name: func})
