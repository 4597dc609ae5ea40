"""The operator registry: one entry per Relax operator, holding everything about it.

An entry has the operator's arity, its struct-info inference `infer_struct_info(call, bb)`,
its legalization `legalize(bb, call) -> Expr` (TVM's signature; typically
`bb.call_te(topi.fn, *call.args, ...)`), its fusion pattern, the attributes it takes, and
whether it computes in floating point only (`float_only`: its inference rejects integer
tensors, so a frontend whose operator accepts them converts them first). Passes and
frontends read operators only through this table.

>>> op = Op.get("relax.add")
>>> op.name, op.num_inputs, op.pattern
('relax.add', 2, <OpPatternKind.kBroadcast: 1>)
>>> Op.get("relax.addd")
Traceback (most recent call last):
  ...
graphc.errors.TypeInferenceError: unknown Relax operator 'relax.addd'; did you mean 'relax.add'?
"""

from __future__ import annotations

import difflib
import enum
from collections.abc import Callable
from dataclasses import dataclass, field

from ...errors import TypeInferenceError
from ...ir.node import Node, node


class OpPatternKind(enum.IntEnum):
    """How an operator's output indexes relate to its inputs (TVM's values; drives FuseOps)."""

    kElemWise = 0
    kBroadcast = 1
    kInjective = 2
    kCommReduce = 3
    kOutEWiseFusable = 4
    kTuple = 7
    kOpaque = 8


@dataclass
class OpInfo:
    """Registry entry. `attrs` maps each attribute the op takes to a one-line description;
    `float_only` marks an op whose tensor argument must have a float dtype (`exp`, `nn.silu`)."""

    name: str
    num_inputs: int
    infer_struct_info: Callable | None = None
    legalize: Callable | None = None
    pattern: OpPatternKind = OpPatternKind.kOpaque
    attrs: dict = field(default_factory=dict)
    purity: bool = True
    description: str = ""
    float_only: bool = False


_REGISTRY: dict[str, OpInfo] = {}
_OPS: dict[str, Op] = {}


@node
class Op(Node):
    """A reference to a registered operator by name; `Op.get(name)` returns the unique instance.

    The field is `op_name`, not `name`: structural equality ignores fields called `name`.
    """

    op_name: str
    __hash__ = object.__hash__

    @property
    def name(self) -> str:
        return self.op_name

    @staticmethod
    def get(name: str) -> Op:
        """The operator `name` (e.g. `"relax.add"`); raises TypeInferenceError if unknown."""
        op = _OPS.get(name)
        if op is None:
            close = difflib.get_close_matches(name, _OPS, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise TypeInferenceError(f"unknown Relax operator {name!r}{hint}")
        return op

    @property
    def info(self) -> OpInfo:
        return _REGISTRY[self.name]

    @property
    def num_inputs(self) -> int:
        return self.info.num_inputs

    @property
    def pattern(self) -> OpPatternKind:
        return self.info.pattern

    def get_attr(self, key: str, default=None):
        """TVM-style attribute look-up: `FInferStructInfo`, `FLegalize`, `TOpPattern`, `FPurity`."""
        info = self.info
        table = {"FInferStructInfo": info.infer_struct_info, "FLegalize": info.legalize,
                 "TOpPattern": int(info.pattern), "FPurity": info.purity}
        value = table.get(key)
        return default if value is None else value

    def __repr__(self) -> str:
        return f"Op({self.name!r})"


def register_op(name: str, num_inputs: int, infer_struct_info: Callable | None = None,
                legalize: Callable | None = None, pattern: OpPatternKind = OpPatternKind.kOpaque,
                attrs: dict | None = None, purity: bool = True, description: str = "",
                float_only: bool = False) -> Op:
    """Register operator `name` (re-registering replaces the entry) and return its Op.

    `infer_struct_info(call, bb) -> StructInfo` raises TypeInferenceError naming the operator,
    the argument, the expected and the actual struct info; `bb` is the calling BlockBuilder
    (or None) for access to the module and the analyzer.
    """
    _REGISTRY[name] = OpInfo(name, num_inputs, infer_struct_info, legalize, OpPatternKind(pattern),
                             dict(attrs or {}), purity, description, float_only)
    op = _OPS.get(name)
    if op is None:
        op = _OPS[name] = Op(name)
    return op


def set_legalize(name: str, legalize: Callable) -> None:
    """Install (or replace) the legalization of a registered operator."""
    Op.get(name).info.legalize = legalize


def list_ops() -> list[str]:
    """Names of every registered operator, sorted."""
    return sorted(_REGISTRY)


def infer_struct_info(call, bb=None):
    """The struct info of `call` (an Op call whose arguments already carry struct info)."""
    op = call.op
    info = op.info
    if info.num_inputs >= 0 and len(call.args) != info.num_inputs:
        raise TypeInferenceError(
            f"{_short(op.name)} expects {info.num_inputs} argument(s), got {len(call.args)}"
        )
    unknown = set(call.attrs) - set(info.attrs)
    if unknown:
        raise TypeInferenceError(
            f"{_short(op.name)} got unknown attribute(s) {sorted(unknown)}; it takes {sorted(info.attrs)}"
        )
    if info.infer_struct_info is None:
        raise TypeInferenceError(f"{_short(op.name)} has no struct info inference registered")
    return info.infer_struct_info(call, bb)


def _short(name: str) -> str:
    return f"'{name.removeprefix('relax.')}'"
