"""Target: which device kind and CPU the compiler generates code for.

A target is written as a string (``"llvm -mcpu=znver4 -mattr=+avx2,-avx512f"``) or a
dict (``{"kind": "llvm", "mcpu": "znver4"}``). The host's CPU name, features and triple
fill in what the description leaves out. ``with Target(...):`` makes a target current.

>>> t = Target("llvm -opt-level=2")
>>> t.kind, t.opt_level, "cpu" in t.keys
('llvm', 2, True)
>>> Target(str(t)).mcpu == t.mcpu
True
"""

from __future__ import annotations

import functools
import threading

from ..errors import TargetError

# kind -> (device keys, options the kind accepts)
_KINDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "llvm": (("cpu",), ("mcpu", "mattr", "mtriple", "opt-level", "num-cores", "tag")),
    "c": (("cpu",), ("mcpu", "mattr", "mtriple", "tag")),
    "cuda": (("cuda", "gpu"), ("arch", "max_num_threads", "thread_warp_size", "tag")),
    "nvptx": (("cuda", "gpu"), ("arch", "mcpu", "mtriple", "max_num_threads", "tag")),
    "opencl": (("opencl", "gpu"), ("device", "max_num_threads", "thread_warp_size", "tag")),
}
_ALIASES = {"cpu": "llvm", "x86": "llvm"}
_LIST_OPTIONS = ("mattr",)
_INT_OPTIONS = ("opt-level", "num-cores", "max_num_threads", "thread_warp_size")
_LOCAL = threading.local()


@functools.lru_cache(maxsize=1)
def host_cpu() -> tuple[str, tuple[str, ...], str]:
    """The host's (CPU name, enabled features, triple) as LLVM reports them."""
    import llvmlite.binding as llvm

    from .llvm.init import ensure_llvm

    ensure_llvm()
    features = tuple(f for f in llvm.get_host_cpu_features().flatten().split(",") if f.startswith("+"))
    return llvm.get_host_cpu_name(), features, llvm.get_process_triple()


class Target:
    """A compilation target: `kind` plus options (`mcpu`, `mattr`, `mtriple`, `arch`, ...)."""

    def __init__(self, target: str | dict | Target = "llvm", host=None):
        if isinstance(target, Target):
            self.kind, self.options = target.kind, dict(target.options)
        elif isinstance(target, dict):
            self.kind, self.options = _from_dict(target)
        elif isinstance(target, str):
            self.kind, self.options = _from_string(target)
        else:
            raise TargetError(f"a target is a string, dict or Target, got {type(target).__name__}")
        self.host = Target(host) if host is not None else None

    # -- attributes ------------------------------------------------------------------------
    @property
    def keys(self) -> tuple[str, ...]:
        return _KINDS[self.kind][0]

    @property
    def is_cpu(self) -> bool:
        return "cpu" in self.keys

    @property
    def mcpu(self) -> str:
        if "mcpu" in self.options:
            return self.options["mcpu"]
        return host_cpu()[0] if self.is_cpu else ""

    @property
    def mattr(self) -> tuple[str, ...]:
        if "mattr" in self.options:
            return tuple(self.options["mattr"])
        if self.is_cpu and "mcpu" not in self.options:
            return host_cpu()[1]
        return ()

    @property
    def triple(self) -> str:
        if "mtriple" in self.options:
            return self.options["mtriple"]
        if self.kind == "nvptx" or self.kind == "cuda":
            return "nvptx64-nvidia-cuda"
        return host_cpu()[2] if self.is_cpu else ""

    mtriple = triple

    @property
    def arch(self) -> str:
        return self.options.get("arch", "")

    @property
    def opt_level(self) -> int:
        return int(self.options.get("opt-level", 3))

    @property
    def attrs(self) -> dict:
        return dict(self.options)

    # -- scope -----------------------------------------------------------------------------
    @staticmethod
    def resolve(target: str | dict | Target | None = None) -> Target:
        """The Target `target` describes; when None, the current target, else "llvm".

        >>> Target.resolve("llvm -opt-level=1").opt_level, Target.resolve(None).kind
        (1, 'llvm')
        """
        if target is None:
            return Target.current() or Target("llvm")
        return target if isinstance(target, Target) else Target(target)

    @staticmethod
    def current(allow_none: bool = True) -> Target | None:
        """The innermost target entered with `with`, or None."""
        stack = getattr(_LOCAL, "stack", [])
        if stack:
            return stack[-1]
        if not allow_none:
            raise TargetError("no target is current; use `with graphc.Target(...):`")
        return None

    def __enter__(self) -> Target:
        if not hasattr(_LOCAL, "stack"):
            _LOCAL.stack = []
        _LOCAL.stack.append(self)
        return self

    def __exit__(self, *exc) -> None:
        _LOCAL.stack.pop()

    # -- text ------------------------------------------------------------------------------
    def __str__(self) -> str:
        parts = [self.kind]
        for key in sorted(self.options):
            value = self.options[key]
            if key in _LIST_OPTIONS:
                value = ",".join(value)
            parts.append(f"-{key}={value}")
        return " ".join(parts)

    def export(self) -> dict:
        """The dict form, e.g. for saving."""
        return {"kind": self.kind, **self.options}

    def __repr__(self) -> str:
        return f"Target({str(self)!r})"

    def __eq__(self, other) -> bool:
        return isinstance(other, Target) and str(self) == str(other)

    def __hash__(self) -> int:
        return hash(str(self))

    def resolved(self) -> str:
        """The full description with host defaults filled in (used as a cache key)."""
        if not self.is_cpu:
            return str(self)
        return f"{self.kind} -mtriple={self.triple} -mcpu={self.mcpu} -mattr={','.join(self.mattr)} " \
               f"-opt-level={self.opt_level}"


def _check_kind(kind: str) -> str:
    kind = _ALIASES.get(kind, kind)
    if kind not in _KINDS:
        raise TargetError(f"unknown target kind {kind!r}; valid kinds are: {', '.join(sorted(_KINDS))}")
    return kind


def _set_option(kind: str, options: dict, key: str, value) -> None:
    key = key.replace("_", "-") if key.replace("_", "-") in _KINDS[kind][1] else key
    if key not in _KINDS[kind][1]:
        valid = ", ".join(f"-{o}" for o in _KINDS[kind][1])
        raise TargetError(f"target kind {kind!r} has no option -{key}; valid options are: {valid}")
    if key in _LIST_OPTIONS:
        if isinstance(value, str):
            value = [v for v in value.split(",") if v]
        value = list(value)
        for feature in value:
            if feature[:1] not in "+-":
                raise TargetError(f"-mattr features start with + or -, got {feature!r} in {value}")
    elif key in _INT_OPTIONS:
        try:
            value = int(value)
        except (TypeError, ValueError):
            raise TargetError(f"target option -{key} takes an integer, got {value!r}") from None
    else:
        value = str(value)
    options[key] = value


def _from_string(text: str) -> tuple[str, dict]:
    words = text.split()
    if not words:
        raise TargetError("empty target string; expected e.g. 'llvm' or 'cuda -arch=sm_80'")
    kind = _check_kind(words[0])
    options: dict = {}
    for word in words[1:]:
        if not word.startswith("-") or "=" not in word:
            raise TargetError(f"target option {word!r} in {text!r} should look like -key=value")
        key, value = word.lstrip("-").split("=", 1)
        _set_option(kind, options, key, value)
    return kind, options


def _from_dict(spec: dict) -> tuple[str, dict]:
    if "kind" not in spec:
        raise TargetError(f"a target dict needs a 'kind' entry, got keys {sorted(spec)}")
    kind = _check_kind(spec["kind"])
    options: dict = {}
    for key, value in spec.items():
        if key in ("kind", "keys", "host"):
            continue
        _set_option(kind, options, key, value)
    return kind, options
