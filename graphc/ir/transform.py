"""The pass infrastructure: passes over IRModules, pipelines, the pass context and instruments.

A pass is a callable `IRModule -> IRModule` that never mutates its input. Make one with
`module_pass` on a function `(mod, ctx) -> mod` or on a class with `transform_module`;
chain passes with `Sequential`; configure them with a `PassContext` (opt level, required
and disabled passes, per-pass config, instruments). As in TVM, a `Sequential` skips the
passes the context does not enable; calling a pass directly always runs it.

>>> from graphc import IRModule
>>> @module_pass(opt_level=1, name="AddMark")
... def add_mark(mod, ctx):
...     return mod.with_attr("mark", True)
>>> add_mark(IRModule()).get_attr("mark")
True
>>> with PassContext(opt_level=0):
...     Sequential([add_mark])(IRModule()).get_attr("mark") is None
True
"""

from __future__ import annotations

import functools
import threading
from dataclasses import dataclass

from ..errors import GraphcError
from .instrument import PassInstrument, PassTimingInstrument, PrintAfterAll, PrintBeforeAll, pass_instrument
from .module import IRModule


@dataclass(frozen=True)
class PassInfo:
    """What the pass manager knows about a pass: its opt level, name and required passes."""

    opt_level: int
    name: str
    required: tuple = ()
    traceable: bool = False

    def __post_init__(self):
        object.__setattr__(self, "required", tuple(self.required or ()))


# --- the pass context ----------------------------------------------------------------------

_STATE = threading.local()


def _stack() -> list:
    stack = getattr(_STATE, "stack", None)
    if stack is None:
        stack = _STATE.stack = []
    return stack


class PassContext:
    """The settings passes run under; a context manager (`with PassContext(opt_level=3):`).

    `config` maps option names (e.g. ``"tir.UnrollLoop"``) to values that passes read
    with `ctx.config.get(...)`.

    >>> with PassContext(opt_level=3, config={"tir.UnrollLoop": {"auto_max_step": 8}}) as ctx:
    ...     PassContext.current() is ctx, ctx.config["tir.UnrollLoop"]["auto_max_step"]
    (True, 8)
    >>> PassContext.current().opt_level
    2
    """

    def __init__(self, opt_level=2, required_pass=None, disabled_pass=None, instruments=None, config=None):
        if not isinstance(opt_level, int) or isinstance(opt_level, bool):
            raise GraphcError(f"PassContext opt_level must be an int, got {opt_level!r}")
        self.opt_level = opt_level
        self.required_pass = frozenset(required_pass or ())
        self.disabled_pass = frozenset(disabled_pass or ())
        self.instruments = list(instruments or ())
        self.config = dict(config or {})
        for key in self.config:
            if not isinstance(key, str):
                raise GraphcError(f"PassContext config keys must be strings, got {key!r}")

    @staticmethod
    def current() -> PassContext:
        """The innermost active context, or a default one (opt_level=2)."""
        stack = _stack()
        if stack:
            return stack[-1]
        default = getattr(_STATE, "default", None)
        if default is None:
            default = _STATE.default = PassContext()
        return default

    def __enter__(self) -> PassContext:
        for instrument in self.instruments:
            instrument.enter_pass_ctx()
        _stack().append(self)
        return self

    def __exit__(self, *exc) -> None:
        stack = _stack()
        if not stack or stack[-1] is not self:
            raise GraphcError("PassContext exited out of order: it is not the innermost context")
        stack.pop()
        for instrument in self.instruments:
            instrument.exit_pass_ctx()

    def override_instruments(self, instruments) -> None:
        """Replace the instruments (exiting the old ones, entering the new, when active)."""
        active = self in _stack()
        if active:
            for instrument in self.instruments:
                instrument.exit_pass_ctx()
        self.instruments = list(instruments or ())
        if active:
            for instrument in self.instruments:
                instrument.enter_pass_ctx()

    def pass_enabled(self, info: PassInfo) -> bool:
        """Whether a Sequential in this context runs the pass described by `info`."""
        if info.name in self.disabled_pass:
            return False
        if info.name in self.required_pass:
            return True
        return info.opt_level <= self.opt_level

    def _run(self, pass_obj: Pass, mod: IRModule) -> IRModule:
        """Run one pass under the instruments, with errors noted with the pass's name."""
        info = pass_obj.info
        if not isinstance(mod, IRModule):
            raise TypeError(f"pass {info.name} expects an IRModule, got {type(mod).__name__}")
        instruments = self.instruments + _GLOBAL_INSTRUMENTS if _GLOBAL_INSTRUMENTS else self.instruments
        if not all(instrument.should_run(mod, info) for instrument in instruments):
            return mod
        for instrument in instruments:
            instrument.run_before_pass(mod, info)
        try:
            result = pass_obj.transform_module(mod, self)
        except Exception as err:
            if not isinstance(pass_obj, Sequential):
                note = f"while running pass {info.name}"
                if note not in getattr(err, "__notes__", ()):
                    err.add_note(note)
            raise
        if not isinstance(result, IRModule):
            raise TypeError(f"pass {info.name} returned {type(result).__name__}, expected an IRModule")
        for instrument in instruments:
            instrument.run_after_pass(result, info)
        return result


# Instruments every PassContext runs besides its own (see `add_global_instrument`).
_GLOBAL_INSTRUMENTS: list[PassInstrument] = []


def add_global_instrument(instrument: PassInstrument) -> None:
    """Run `instrument` around every pass of every PassContext, nested or not, until removed.

    A PassContext's own `instruments` apply within it only; a global instrument sees every
    pass the process runs (its enter/exit hooks are not called). The test suite uses one to
    check that every module lowered by any test is well formed and prints and parses back.

    >>> from graphc import IRModule
    >>> seen = []
    >>> @pass_instrument
    ... class Names:
    ...     def run_before_pass(self, mod, info):
    ...         seen.append(info.name)
    >>> names = Names()
    >>> add_global_instrument(names)
    >>> with PassContext(opt_level=3):
    ...     _ = module_pass(lambda m, c: m, name="Nop")(IRModule())
    >>> remove_global_instrument(names)
    >>> seen
    ['Nop']
    """
    if not isinstance(instrument, PassInstrument):
        raise TypeError(f"add_global_instrument takes a PassInstrument, got {type(instrument).__name__}")
    _GLOBAL_INSTRUMENTS.append(instrument)


def remove_global_instrument(instrument: PassInstrument) -> None:
    """Stop running an instrument added with `add_global_instrument`."""
    _GLOBAL_INSTRUMENTS.remove(instrument)


# --- passes --------------------------------------------------------------------------------

_REGISTRY: dict[str, object] = {}


def get_pass(name: str):
    """The pass (or pass class) registered under `name` by a decorator, for `required`."""
    try:
        return _REGISTRY[name]
    except KeyError:
        raise GraphcError(
            f"no pass named {name!r} is registered (known: {', '.join(sorted(_REGISTRY))})"
        ) from None


class Pass:
    """Base class of passes: `pass_(mod)` runs it in the current PassContext."""

    info: PassInfo

    def __call__(self, mod: IRModule) -> IRModule:
        return PassContext.current()._run(self, mod)

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        raise NotImplementedError(f"{type(self).__name__} does not define transform_module")

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.info.name} opt_level={self.info.opt_level}>"


class ModulePass(Pass):
    """A pass made from a function `(mod, ctx) -> mod`; it receives a copy of the module."""

    def __init__(self, pass_func, info: PassInfo):
        self.pass_func = pass_func
        self.info = info

    def transform_module(self, mod, ctx):
        return self.pass_func(mod.copy(), ctx)


class SharedModulePass(ModulePass):
    """A module pass handed the module itself, not a copy, so that it can return it unchanged
    (copy on write); such a pass copies before changing anything. `module_pass(copy=False)`."""

    def transform_module(self, mod, ctx):
        return self.pass_func(mod, ctx)


class FunctionPass(Pass):
    """A pass applying `pass_func(func, mod, ctx) -> func` to each function of the module that
    is an instance of `function_types` (every function when empty); returning None removes it.

    Subclass it with `function_types` set for a kind of function (`tir.transform.PrimFuncPass`
    does so for PrimFuncs) and build its decorator with `make_pass_decorator`.
    """

    function_types: tuple = ()

    def __init__(self, pass_func, info: PassInfo):
        self.pass_func = pass_func
        self.info = info

    def transform_module(self, mod, ctx):
        result = mod.copy()
        for gv, func in mod.items():
            if self.function_types and not isinstance(func, self.function_types):
                continue
            new_func = self.pass_func(func, mod, ctx)
            if new_func is None:
                del result[gv]
            elif new_func is not func:
                result[gv] = new_func
        return result


class Sequential(Pass):
    """Run `passes` in order, skipping those the PassContext does not enable.

    Passes named in a pass's `required` run before it (looked up with `get_pass`).
    """

    def __init__(self, passes=None, opt_level=0, name="sequential", required=None):
        self.passes = list(passes or [])
        for p in self.passes:
            if isinstance(p, type) and issubclass(p, Pass):
                raise TypeError(
                    f"Sequential takes Pass objects, got the class {p.__name__}; use {p.__name__}()"
                )
            if not isinstance(p, Pass):
                raise TypeError(f"Sequential takes Pass objects, got {type(p).__name__} ({p!r})")
        self.info = PassInfo(opt_level, name, tuple(required or ()))

    def transform_module(self, mod, ctx):
        for p in self.passes:
            if not ctx.pass_enabled(p.info):
                continue
            for required in p.info.required:
                mod = ctx._run(_instantiate(get_pass(required)), mod)
            mod = ctx._run(p, mod)
        return mod

    def __repr__(self) -> str:
        return f"<Sequential {self.info.name}: {', '.join(p.info.name for p in self.passes)}>"


def _instantiate(registered) -> Pass:
    return registered() if isinstance(registered, type) else registered


def make_pass_decorator(base: type, method: str, pass_func, opt_level, name, required, traceable=False):
    """Shared body of `module_pass`-style decorators.

    `base(func, info)` wraps a function; a decorated class becomes a subclass of `base`
    whose instances forward to the user's `method` (the class's __init__ arguments are
    the pass options).
    """

    def create(target):
        pass_name = name or target.__name__
        info = PassInfo(opt_level, pass_name, tuple(required or ()), traceable)
        if isinstance(target, type):
            result = _class_pass(base, method, target, info)
        elif callable(target):
            result = base(target, info)
            functools.update_wrapper(result, target, updated=())
        else:
            raise TypeError(f"a pass decorator applies to a function or a class, got {type(target).__name__}")
        _REGISTRY[pass_name] = result
        return result

    if pass_func is not None:
        return create(pass_func)
    return create


def _class_pass(base: type, method: str, user_cls: type, info: PassInfo) -> type:
    if not callable(getattr(user_cls, method, None)):
        raise TypeError(f"pass class {user_cls.__name__} must define {method}()")

    def __init__(self, *args, **kwargs):
        inst = user_cls(*args, **kwargs)
        base.__init__(self, getattr(inst, method), info)
        object.__setattr__(self, "_inst", inst)

    def __getattr__(self, attr):
        if attr == "_inst":
            raise AttributeError(attr)
        return getattr(self._inst, attr)

    namespace = {
        "__init__": __init__,
        "__getattr__": __getattr__,
        "__doc__": user_cls.__doc__,
        "__module__": user_cls.__module__,
        "__qualname__": user_cls.__qualname__,
        "pass_info": info,
    }
    cls = type(user_cls.__name__, (base,), namespace)
    functools.update_wrapper(__init__, user_cls.__init__, updated=())
    return cls


def module_pass(pass_func=None, opt_level=0, name=None, required=None, traceable=False, copy=True):
    """Make a module pass from a function `(mod, ctx) -> mod` or a class with `transform_module`.

    The pass receives a copy of the module, or with `copy=False` the module itself (it must
    then copy before changing anything, and may return its input when nothing changes).

    >>> @module_pass(opt_level=0, name="Tag")
    ... class Tag:
    ...     def __init__(self, value):
    ...         self.value = value
    ...     def transform_module(self, mod, ctx):
    ...         return mod.with_attr("tag", self.value)
    >>> p = Tag("x")
    >>> isinstance(p, Pass), p.info.name, p(IRModule()).get_attr("tag")
    (True, 'Tag', 'x')
    """
    return make_pass_decorator(
        ModulePass if copy else SharedModulePass, "transform_module", pass_func, opt_level, name,
        required, traceable,
    )


def function_pass(pass_func=None, opt_level=0, name=None, required=None, traceable=False):
    """Make a pass over every function of a module from a function `(func, mod, ctx) -> func`
    or a class with `transform_function`.

    >>> @function_pass(name="Count")
    ... def count(func, mod, ctx):
    ...     return func
    >>> isinstance(count, FunctionPass), len(count(IRModule()))
    (True, 0)
    """
    return make_pass_decorator(
        FunctionPass, "transform_function", pass_func, opt_level, name, required, traceable
    )


__all__ = [
    "add_global_instrument",
    "remove_global_instrument",
    "FunctionPass",
    "function_pass",
    "ModulePass",
    "Pass",
    "PassContext",
    "PassInfo",
    "PassInstrument",
    "PassTimingInstrument",
    "PrintAfterAll",
    "PrintBeforeAll",
    "Sequential",
    "get_pass",
    "make_pass_decorator",
    "module_pass",
    "pass_instrument",
]
