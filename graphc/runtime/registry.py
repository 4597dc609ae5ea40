"""The global function registry: Python functions the VM calls by name (TVM's packed functions).

`register_func(name)` makes a Python function callable from compiled code:
`R.call_packed("name", ...)`, `R.call_pure_packed("name", ...)` and
`R.call_dps_packed("name", args, out_sinfo)` (which passes preallocated outputs after the
inputs) all look the name up here when the executable is loaded. This is how a numpy or
torch kernel is plugged into a compiled model. Arguments arrive as the VM's values:
`graphc.runtime.Tensor` for tensors (`.numpy()` reads one, `.copyfrom(array)` or
`t[:] = array` writes one), `ShapeTuple` for shapes, Python numbers for `R.prim_value`s and
`str` for `R.str`s; a function may return a Tensor, a numpy array or a torch tensor.
The registry lives in the runtime, so a saved executable finds the functions without the
compiler (the VM's own builtins, `vm.builtin.*`, are registered here too).

>>> from graphc.runtime import tensor
>>> @register_func("example.double")
... def double(x):
...     return x.numpy() * 2
>>> get_global_func("example.double")(tensor([1.0, 2.0])).tolist()
[2.0, 4.0]
>>> get_global_func("example.missing", allow_missing=True) is None
True
>>> remove_global_func("example.double")
"""

from __future__ import annotations

from collections.abc import Callable

_FUNCS: dict[str, Callable] = {}


def register_func(func_name, f: Callable | None = None, override: bool = False):
    """Register `f` under `func_name` (usable as `@register_func`, `@register_func("name")`
    or `register_func("name", f)`); re-registering a name needs `override=True`."""
    if callable(func_name) and f is None:  # bare @register_func: the function's own name
        return register_func(func_name.__name__, func_name, override)
    if not isinstance(func_name, str):
        raise TypeError(f"register_func expects a name (str), got {type(func_name).__name__}")

    def register(fn: Callable) -> Callable:
        if not callable(fn):
            raise TypeError(f"register_func({func_name!r}) expects a callable, got {type(fn).__name__}")
        if func_name in _FUNCS and not override:
            raise ValueError(f"global function {func_name!r} is already registered; pass override=True "
                             "to replace it")
        _FUNCS[func_name] = fn
        return fn

    return register(f) if f is not None else register


def get_global_func(name: str, allow_missing: bool = False) -> Callable | None:
    """The function registered as `name`; None if missing and `allow_missing`, else ValueError."""
    fn = _FUNCS.get(name)
    if fn is None and not allow_missing:
        import difflib

        close = difflib.get_close_matches(name, list(_FUNCS), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        raise ValueError(f"no global function named {name!r} is registered (register one with "
                         f"graphc.register_func){hint}")
    return fn


def list_global_func_names() -> list[str]:
    """The names of every registered function, sorted."""
    return sorted(_FUNCS)


def remove_global_func(name: str) -> None:
    """Unregister `name` (KeyError if it is not registered)."""
    try:
        del _FUNCS[name]
    except KeyError:
        raise KeyError(f"no global function named {name!r} is registered") from None


register_global_func = register_func  # TVM's newer spelling

__all__ = ["get_global_func", "list_global_func_names", "register_func", "register_global_func",
           "remove_global_func"]
