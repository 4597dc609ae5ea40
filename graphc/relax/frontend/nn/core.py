"""The authoring core: `Tensor` (a Relax value being built), `Parameter`, `Module`, `export_tvm`.

A module's `forward` runs once per exported method with `Tensor`s standing for the inputs;
every `nn.op` call emits one binding into the function being built, named after the
operator (`permute_dims`, `matmul`, `add`, ...), like TVM's `relax.frontend.nn`.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import numpy as np

from ....tir.expr import IntImm
from ... import expr as relax_expr
from ...block_builder import BlockBuilder
from ...struct_info import TensorStructInfo

_STATE = threading.local()


def current_builder() -> BlockBuilder:
    bb = getattr(_STATE, "bb", None)
    if bb is None:
        raise RuntimeError("nn operators run only while a module is exported (Module.export_tvm)")
    return bb


def emit(expr, name: str) -> Tensor:
    """Bind `expr` in the function being exported, named `name` (made unique)."""
    return Tensor(current_builder().emit(expr, name))


class Tensor:
    """A tensor value of the function being exported (wraps a Relax expression)."""

    def __init__(self, expr: relax_expr.Expr):
        self._expr = expr

    @property
    def struct_info(self) -> TensorStructInfo:
        return self._expr.struct_info

    @property
    def shape(self) -> list:
        """Static sizes as ints, symbolic ones as their tir expressions."""
        return [d.value if isinstance(d, IntImm) else d for d in self.struct_info.shape_values]

    @property
    def ndim(self) -> int:
        return self.struct_info.ndim

    @property
    def dtype(self) -> str:
        return self.struct_info.dtype

    def __repr__(self) -> str:
        return f"nn.Tensor({self._expr!r}: {self.struct_info})"

    def _binary(self, other, name: str, reverse: bool = False):
        from . import op

        fn = getattr(op, name)
        return fn(other, self) if reverse else fn(self, other)

    def __add__(self, other):
        return self._binary(other, "add")

    def __radd__(self, other):
        return self._binary(other, "add", True)

    def __sub__(self, other):
        return self._binary(other, "subtract")

    def __rsub__(self, other):
        return self._binary(other, "subtract", True)

    def __mul__(self, other):
        return self._binary(other, "multiply")

    def __rmul__(self, other):
        return self._binary(other, "multiply", True)

    def __truediv__(self, other):
        return self._binary(other, "divide")

    def __matmul__(self, other):
        return self._binary(other, "matmul")

    def __neg__(self):
        from . import op

        return op.negative(self)

    def reshape(self, *shape):
        from . import op

        return op.reshape(self, shape[0] if len(shape) == 1 and isinstance(shape[0], list | tuple) else shape)

    def permute_dims(self, axes=None):
        from . import op

        return op.permute_dims(self, axes)

    def astype(self, dtype: str):
        from . import op

        return op.astype(self, dtype)


class Parameter(Tensor):
    """A weight of a module: shape and dtype, and optionally its value (`.data`).

    While a module is exported, a parameter stands for the function parameter named after
    its place in the module tree (`fc1.weight` -> `fc1_weight`).
    """

    def __init__(self, shape, dtype: str = "float32"):
        super().__init__(None)
        self._shape = tuple(shape)
        self._dtype = dtype
        self.data: np.ndarray | None = None

    @property
    def struct_info(self) -> TensorStructInfo:
        if self._expr is not None:
            return self._expr.struct_info
        return TensorStructInfo(self._shape, self._dtype)

    def __repr__(self) -> str:
        return f"nn.Parameter({self._shape}, {self._dtype!r})"


class Module:
    """Base class of model components: parameters and sub-modules are attributes."""

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} has no forward method")

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def named_parameters(self, prefix: str = "") -> Iterator[tuple[str, Parameter]]:
        """(dotted name, Parameter) for every parameter in the module tree, in attribute order."""
        for name, value in vars(self).items():
            path = f"{prefix}{name}"
            if isinstance(value, Parameter):
                yield path, value
            elif isinstance(value, Module):
                yield from value.named_parameters(path + ".")
            elif isinstance(value, list | tuple):
                for i, item in enumerate(value):
                    if isinstance(item, Module):
                        yield from item.named_parameters(f"{path}.{i}.")
                    elif isinstance(item, Parameter):
                        yield f"{path}.{i}", item

    def parameters(self) -> list[Parameter]:
        return [p for _, p in self.named_parameters()]

    def export_tvm(self, spec: dict, debug: bool = False):
        """`(IRModule, [(param name, Parameter), ...])`: one Relax function per method in `spec`.

        `spec` maps method names to `{input name: nn.spec.Tensor(...)}`. Each function takes
        the inputs, then every parameter (`R.func_attr({"num_input": <inputs>})`).
        """
        from .spec import Tensor as TensorSpec

        if not isinstance(spec, dict) or not spec:
            raise TypeError("export_tvm expects {method name: {input name: nn.spec.Tensor}}")
        named = [(name.replace(".", "_"), p) for name, p in self.named_parameters()]
        bb = BlockBuilder()
        previous = getattr(_STATE, "bb", None)
        _STATE.bb = bb
        try:
            for method, inputs in spec.items():
                fn = getattr(self, method, None)
                if not callable(fn):
                    raise AttributeError(f"{type(self).__name__} has no method {method!r} to export")
                symbols: dict = {}
                in_vars = []
                for name, s in inputs.items():
                    if not isinstance(s, TensorSpec):
                        raise TypeError(f"input {name!r} of {method!r}: expected nn.spec.Tensor, got {s!r}")
                    in_vars.append(relax_expr.Var(name, s.struct_info(symbols)))
                param_vars = [relax_expr.Var(name, p.struct_info) for name, p in named]
                with bb.function(method, in_vars + param_vars, attrs={"num_input": len(in_vars)}):
                    with bb.dataflow():
                        for (_, p), v in zip(named, param_vars):
                            p._expr = v
                        out = fn(*[Tensor(v) for v in in_vars])
                        result = bb.emit_output(_unwrap(out), "gv")
                    bb.emit_func_output(result)
        finally:
            _STATE.bb = previous
            for _, p in named:
                p._expr = None
        return bb.get(), named

    export = export_tvm


def _unwrap(value):
    if isinstance(value, Tensor):
        return value._expr
    if isinstance(value, list | tuple):
        return relax_expr.Tuple([_unwrap(v) for v in value])
    raise TypeError(f"forward must return nn.Tensors (or a tuple of them), got {type(value).__name__}")
