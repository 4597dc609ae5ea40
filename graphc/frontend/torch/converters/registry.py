"""The converter table: ATen overload name -> function `(importer, args) -> Relax expr`.

`Args` binds a node's positional and keyword arguments to the operator's schema names.
Every argument the converter does not read must still have its schema default, or the
import stops with a FrontendError naming it: no argument is ever silently ignored.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from ....errors import FrontendError

CONVERTERS: dict[str, Callable] = {}


def converter(*names: str):
    """Register the decorated function for ATen names (`"aten.add.Tensor"`, or `"aten.add"`
    for every overload)."""

    def register(fn):
        for name in names:
            CONVERTERS[name] = fn
        return fn

    return register


def op_key(target) -> tuple[str, str]:
    """(`aten.add.Tensor`, `aten.add`) for an OpOverload; the function name for Python callables."""
    schema = getattr(target, "_schema", None)
    if schema is None:
        name = getattr(target, "__name__", str(target))
        return name, name
    packet = schema.name.replace("::", ".", 1)
    return f"{packet}.{schema.overload_name or 'default'}", packet


def lookup(target) -> Callable | None:
    full, packet = op_key(target)
    return CONVERTERS.get(full) or CONVERTERS.get(packet)


class Args:
    """A node's arguments by schema name; reading one marks it handled."""

    def __init__(self, importer, node):
        self.importer = importer
        self.node = node
        self.op = op_key(node.target)[0]
        self.values: dict = {}
        self.defaults: dict = {}
        self._used: set = set()
        schema = getattr(node.target, "_schema", None)
        if schema is None:
            for i, a in enumerate(node.args):
                self.values[f"arg{i}"] = a
            self.values.update(node.kwargs)
            return
        positional = [a for a in schema.arguments if not a.kwarg_only]
        if len(node.args) > len(positional):
            raise FrontendError(
                f"{self.op}: {len(node.args)} positional arguments, the schema takes {len(positional)}"
            )
        for a, v in zip(positional, node.args):
            self.values[a.name] = v
        for a in schema.arguments:
            if a.name in node.kwargs:
                self.values[a.name] = node.kwargs[a.name]
            if a.has_default_value():
                self.defaults[a.name] = a.default_value
                self.values.setdefault(a.name, a.default_value)

    @property
    def out(self):
        """The node's result as torch traced it (a FakeTensor, a tuple of them, a SymInt)."""
        return self.node.meta.get("val")

    @property
    def out_shape(self) -> list:
        """The traced result's shape as PrimExprs (symbolic sizes as their tir.Vars)."""
        return [self.importer.symbols.to_prim(d) for d in self.out.shape]

    def prim(self, value):
        """A traced size (int or SymInt) as a PrimExpr."""
        return self.importer.symbols.to_prim(value)

    @property
    def out_dtype(self) -> str:
        from ..translator import torch_dtype_name

        val = self.out
        if isinstance(val, list | tuple):
            val = val[0]
        return torch_dtype_name(val.dtype)

    def __getitem__(self, name: str):
        """The argument as a Relax expression or Python value (FX nodes replaced)."""
        return self.importer.retrieve(self.raw(name))

    def raw(self, name: str):
        if name not in self.values:
            raise FrontendError(f"{self.op}: missing argument {name!r} in node {self.node.name}")
        self._used.add(name)
        return self.values[name]

    def get(self, name: str, default=None):
        return self[name] if name in self.values else default

    def fake(self, name: str):
        """The traced value (FakeTensor) of a tensor argument."""
        value = self.raw(name)
        return value.meta.get("val") if isinstance(value, torch.fx.Node) else value

    def ignore(self, *names: str) -> None:
        """Mark arguments as deliberately without effect on the result (e.g. `device` on the CPU)."""
        self._used.update(n for n in names if n in self.values)

    def unsupported(self, name: str, why: str = "is not supported") -> FrontendError:
        return FrontendError(f"{self.op} (node {self.node.name!r}): {name}={self.values.get(name)!r} {why}")

    def check_all_used(self) -> None:
        for name, value in self.values.items():
            if name in self._used:
                continue
            if name in self.defaults and _same(value, self.defaults[name]):
                continue
            raise self.unsupported(name, "is not supported by graphc's conversion of this operator")


def _same(a, b) -> bool:
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001 - tensors and other values without a clean ==
        return a is b
