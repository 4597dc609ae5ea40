"""Attributes of operators by name, and per-target intrinsic lowering rules (TVM's `tvm.ir`).

Two tables every layer may read, kept here so that `graphc.ir.register_op_attr` and
`graphc.ir.register_intrin_lowering` work as in TVM without `ir` knowing who consumes them:

- op attributes: `register_op_attr("tir.mylog", "TCallEffectKind", CallEffectKind.Pure)`; an
  intrinsic with an effect kind can be called with `tir.call_intrin`;
- lowering rules: `register_intrin_lowering("tir.mylog", target="opencl", f=rule, level=99)`;
  a rule maps a `Call` to the expression to generate instead, or returns None / the call itself
  when it does not apply. Rules of kind "default" apply to every target; for one op the highest
  `level` is tried first. The code generators apply them (`graphc.target.intrin.lower_intrin`).

>>> _ = register_op_attr("tir.demo_op", "TCallEffectKind", 1)
>>> get_op_attr("tir.demo_op", "TCallEffectKind")
1
>>> rule = register_intrin_lowering("tir.demo_op", target="opencl", f=lambda op: None, level=5)
>>> [level for level, _ in lowering_rules("opencl", "tir.demo_op")]
[5]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import TargetError

_OP_ATTRS: dict[str, dict[str, tuple[int, Any]]] = {}
# (target kind, op name) -> [(level, rule)], highest level first
_RULES: dict[tuple[str, str], list[tuple[int, Callable]]] = {}


def _op_name(name: str) -> str:
    return name if "." in name else "tir." + name


def register_op_attr(op_name: str, attr_key: str, value=None, level: int = 10):
    """Set attribute `attr_key` of operator `op_name` (a decorator when `value` is None).

    A later registration replaces an earlier one unless the earlier has a higher `level`.
    """

    def register(v):
        name = _op_name(op_name)
        attrs = _OP_ATTRS.setdefault(name, {})
        old = attrs.get(attr_key)
        if old is None or old[0] <= level:
            attrs[attr_key] = (level, v)
        return v

    return register if value is None else register(value)


def get_op_attr(op_name: str, attr_key: str, default=None):
    """Attribute `attr_key` of operator `op_name`, or `default`."""
    entry = _OP_ATTRS.get(_op_name(op_name), {}).get(attr_key)
    return default if entry is None else entry[1]


def has_op(op_name: str) -> bool:
    """Whether any attribute is registered for `op_name`."""
    return _op_name(op_name) in _OP_ATTRS


def register_intrin_lowering(op_name: str, target: str = "default", f: Callable | None = None,
                             level: int = 10, override: bool = False):
    """Register `f` to lower intrinsic `op_name` on target kind `target` (a decorator too).

    Two rules of one op and target at the same level are an error unless `override`
    (which also drops the other rules of that op and target).
    """
    name = _op_name(op_name)
    kind = str(target).split()[0]

    def register(rule: Callable) -> Callable:
        entries = _RULES.setdefault((kind, name), [])
        if override:
            entries.clear()
        elif any(lvl == level for lvl, _ in entries):
            raise TargetError(f"a lowering rule for {name} on {kind!r} at level {level} exists; "
                              "pass a different level or override=True")
        entries.append((level, rule))
        entries.sort(key=lambda e: -e[0])
        return rule

    return register if f is None else register(f)


def lowering_rules(kind: str, op_name: str) -> list:
    """The rules of `op_name` for target kind `kind` (not the defaults), highest level first."""
    return _RULES.get((kind, op_name), [])


__all__ = ["get_op_attr", "has_op", "lowering_rules", "register_intrin_lowering", "register_op_attr"]
