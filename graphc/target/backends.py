"""The build table: code generators keyed by target kind, and `build` (PrimFuncs -> runtime Module).

Each back end registers one function `(lowered IRModule, Target) -> runtime Module` under the
target kinds it compiles for. Everything above `graphc.target` builds tensor programs through
`build`, never by naming a back end, so a new back end plugs in with `register_backend` alone.

>>> import numpy as np
>>> from graphc import te
>>> A = te.placeholder((4,), name="A")
>>> B = te.compute((4,), lambda i: A[i] * 2.0, name="B")
>>> lib = build(te.create_prim_func([A, B]).with_attr("global_symbol", "double"), "llvm")
>>> b = np.zeros(4, "float32"); lib["double"](np.arange(4, dtype="float32"), b); b
array([0., 2., 4., 6.], dtype=float32)
>>> sorted(backend_kinds())
['c', 'cuda', 'llvm', 'opencl']
"""

from __future__ import annotations

from collections.abc import Callable

from ..errors import TargetError
from ..ir.module import IRModule
from ..tir.function import PrimFunc
from ..tir.transform.pipeline import lower_pipeline
from .target import Target

# target kind -> fn(lowered IRModule, Target) -> runtime Module
_BACKENDS: dict[str, Callable] = {}


def register_backend(kind: str, builder: Callable | None = None):
    """Register `builder(lowered_mod, target) -> runtime.Module` for target `kind` (a decorator too)."""

    def register(fn: Callable) -> Callable:
        _BACKENDS[kind] = fn
        return fn

    return register(builder) if builder is not None else register


def backend_kinds() -> tuple[str, ...]:
    """The target kinds that have a registered back end."""
    return tuple(_BACKENDS)


def get_backend(kind: str) -> Callable:
    """The builder registered for `kind`; a TargetError naming the kinds that can be built otherwise."""
    builder = _BACKENDS.get(kind)
    if builder is None:
        available = ", ".join(sorted(_BACKENDS)) or "none"
        raise TargetError(f"no code generator is registered for target kind {kind!r}; graphc can build "
                          f"for: {available}")
    return builder


def build(mod: IRModule | PrimFunc, target: str | dict | Target | None = None, *, lowered: bool = False):
    """Lower the PrimFuncs of `mod` and compile them for `target` with its kind's back end.

    A PrimFunc is named after its "global_symbol" attribute (else its GlobalVar's name).
    `lowered=True` says they are in the lowered form already (lowered for `target`, as
    `graphc.compile` does): lowering them again would change nothing and cost its time.
    """
    target = Target.resolve(target)
    builder = get_backend(target.kind)
    if isinstance(mod, PrimFunc):
        mod = IRModule({mod.attrs.get("global_symbol", "main"): mod})
    if not lowered:
        with target:
            mod = lower_pipeline()(mod)
    return builder(mod, target)


def _register_builtin_backends() -> None:
    from .c_build import build_c
    from .gpu import build_gpu
    from .llvm.build import build_llvm

    register_backend("llvm", build_llvm)
    register_backend("c", build_c)
    register_backend("cuda", build_gpu)
    register_backend("opencl", build_gpu)


_register_builtin_backends()

__all__ = ["backend_kinds", "build", "get_backend", "register_backend"]
