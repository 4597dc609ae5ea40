"""PrimFunc: a tensor program, its parameters, the buffers they carry and its body."""

from __future__ import annotations

from ..errors import TIRError
from ..ir.node import Node, node
from .buffer import Buffer
from .expr import Var
from .stmt import Stmt


@node
class PrimFunc(Node):
    """A TensorIR function.

    `params` are Vars: handle params map to Buffers through `buffer_map`; scalar params
    are passed by value. Symbolic dimensions of the buffers (e.g. `n` in `(n, 128)`) are
    bound from the arguments' shapes when the function is called.

    >>> from graphc import tir
    >>> A = tir.decl_buffer((8,), "float32", "A")
    >>> a = tir.Var("a", "handle")
    >>> f = PrimFunc([a], tir.Evaluate(0), buffer_map={a: A})
    >>> f.with_attr("global_symbol", "main").attrs
    {'global_symbol': 'main'}
    """

    params: tuple
    body: Stmt
    ret_type: str | None = None
    buffer_map: dict = None  # type: ignore[assignment]
    attrs: dict = None  # type: ignore[assignment]

    def __init__(self, params, body, ret_type=None, buffer_map=None, attrs=None):
        params = tuple(params)
        buffer_map = dict(buffer_map or {})
        for param in params:
            if not isinstance(param, Var):
                raise TIRError(f"PrimFunc parameters must be Vars, got {type(param).__name__}")
        for var, buf in buffer_map.items():
            if var not in params:
                raise TIRError(f"buffer_map key {var.name} is not a parameter")
            if not isinstance(buf, Buffer):
                raise TIRError(f"buffer_map[{var.name}] must be a Buffer, got {type(buf).__name__}")
        object.__setattr__(self, "params", params)
        object.__setattr__(self, "body", body)
        object.__setattr__(self, "ret_type", ret_type)
        object.__setattr__(self, "buffer_map", buffer_map)
        object.__setattr__(self, "attrs", dict(attrs or {}))

    def with_attr(self, key, value=None) -> PrimFunc:
        """A copy with attribute `key` set (or several, when `key` is a dict)."""
        attrs = dict(self.attrs)
        if isinstance(key, dict):
            attrs.update(key)
        else:
            attrs[key] = value
        return PrimFunc(self.params, self.body, self.ret_type, self.buffer_map, attrs)

    def with_body(self, body: Stmt) -> PrimFunc:
        if body is self.body:
            return self
        return PrimFunc(self.params, body, self.ret_type, self.buffer_map, self.attrs)

    def without_attr(self, key) -> PrimFunc:
        attrs = {k: v for k, v in self.attrs.items() if k != key}
        return PrimFunc(self.params, self.body, self.ret_type, self.buffer_map, attrs)

    def replace(self, **changes) -> PrimFunc:
        if all(getattr(self, k) is v for k, v in changes.items()):
            return self
        fields = {f: getattr(self, f) for f in ("params", "body", "ret_type", "buffer_map", "attrs")}
        fields.update(changes)
        return PrimFunc(**fields)

    def get_attr(self, key, default=None):
        return self.attrs.get(key, default)

    @property
    def buffers(self) -> list[Buffer]:
        """The parameter buffers in parameter order."""
        return [self.buffer_map[p] for p in self.params if p in self.buffer_map]

    def __repr__(self) -> str:
        return self.script()
