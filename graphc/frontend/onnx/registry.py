"""The converter table: (domain, operator, since_version) -> `fn(node) -> Relax value(s)`.

A converter is registered for the ONNX `since_version` from which it is right; an import
picks, for each node, the converter with the greatest `since` not above the operator's
version in the model's own opset import (an opset-7 model and an opset-21 model of the same
operator may get different converters). `Node` reads the node's attributes and inputs by
the operator schema's names; every attribute or input the converter does not read must
still have its default, or the import stops naming the node, the operator, the attribute
and the value: nothing is ever silently ignored.

>>> lookup("", "Reshape", 14).since, lookup("", "Reshape", 4).since
(5, 1)
>>> lookup("", "NoSuchOp", 21) is None
True
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import onnx
from onnx import AttributeProto, numpy_helper

from ...errors import FrontendError

DEFAULT_DOMAINS = ("", "ai.onnx")


@dataclass(frozen=True)
class Converter:
    """One registered conversion: the operator, its domain and the first version it serves."""

    op_type: str
    domain: str
    since: int
    fn: Callable


CONVERTERS: dict[tuple[str, str], list[Converter]] = {}


def normalize_domain(domain: str) -> str:
    return "" if domain in DEFAULT_DOMAINS else domain


def converter(*op_types: str, since: int = 1, domain: str = ""):
    """Register the decorated function as the conversion of `op_types` from version `since`."""

    def register(fn):
        for op_type in op_types:
            entries = CONVERTERS.setdefault((normalize_domain(domain), op_type), [])
            entries[:] = [c for c in entries if c.since != since]
            bisect.insort(
                entries, Converter(op_type, normalize_domain(domain), since, fn), key=lambda c: c.since
            )
        return fn

    return register


def lookup(domain: str, op_type: str, version: int) -> Converter | None:
    """The converter for `op_type` at operator version `version`, or None."""
    entries = CONVERTERS.get((normalize_domain(domain), op_type))
    if not entries:
        return None
    best = None
    for c in entries:
        if c.since <= version:
            best = c
    return best


def get_schema(op_type: str, version: int, domain: str):
    """ONNX's schema of the operator as of opset `version` of `domain`, or None (contrib ops)."""
    try:
        return onnx.defs.get_schema(op_type, version, normalize_domain(domain))
    except onnx.defs.SchemaError:
        return None


def attribute_value(attr: AttributeProto):
    """A node attribute as a Python value: numbers, str, lists, numpy arrays, GraphProto."""
    kind = attr.type
    if kind == AttributeProto.FLOAT:
        return float(attr.f)
    if kind == AttributeProto.INT:
        return int(attr.i)
    if kind == AttributeProto.STRING:
        return attr.s.decode("utf-8", errors="replace")
    if kind == AttributeProto.TENSOR:
        return numpy_helper.to_array(attr.t)
    if kind == AttributeProto.GRAPH:
        return attr.g
    if kind == AttributeProto.FLOATS:
        return [float(v) for v in attr.floats]
    if kind == AttributeProto.INTS:
        return [int(v) for v in attr.ints]
    if kind == AttributeProto.STRINGS:
        return [s.decode("utf-8", errors="replace") for s in attr.strings]
    if kind == AttributeProto.GRAPHS:
        return list(attr.graphs)
    if kind == AttributeProto.TENSORS:
        return [numpy_helper.to_array(t) for t in attr.tensors]
    if kind == AttributeProto.TYPE_PROTO:
        return attr.tp
    raise FrontendError(f"attribute {attr.name!r} has an attribute type ({kind}) graphc cannot read")


_NO_DEFAULT = object()


def schema_default(schema, name: str):
    """The schema's default of attribute `name`, or `_NO_DEFAULT`."""
    if schema is None or name not in schema.attributes:
        return _NO_DEFAULT
    default = schema.attributes[name].default_value
    if default is None or not default.name and default.type == AttributeProto.UNDEFINED:
        return _NO_DEFAULT
    try:
        return attribute_value(default)
    except FrontendError:
        return _NO_DEFAULT


def same_value(a, b) -> bool:
    """Attribute equality that treats lists, tuples and arrays by value."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.array_equal(np.asarray(a), np.asarray(b))
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b))
    return a == b


class Node:
    """One ONNX node as its converter sees it: attributes and inputs by name or position.

    Reading an attribute or an input marks it handled; `finish()` then rejects any other
    attribute that differs from its schema default and any other non-empty input.
    """

    def __init__(self, importer, proto, version: int, schema=None):
        self.importer = importer
        self.proto = proto
        self.op_type = proto.op_type
        self.domain = normalize_domain(proto.domain)
        self.version = version
        self.schema = schema
        self.name = proto.name or f"{proto.op_type}({', '.join(proto.output)})"
        self.attrs = {a.name: a for a in proto.attribute}
        self.inputs = list(proto.input)
        self.outputs = list(proto.output)
        self._read_attrs: set[str] = set()
        self._read_inputs: set[int] = set()
        self.narrow_outputs: dict[int, str] = {}

    # -- messages -------------------------------------------------------------------------

    @property
    def where(self) -> str:
        domain = f"{self.domain}." if self.domain else ""
        return f"{domain}{self.op_type} node {self.name!r} (opset {self.version})"

    def error(self, message: str) -> FrontendError:
        return FrontendError(f"{self.where}: {message}")

    def unsupported(self, attr: str, value=None, why: str = "is not supported") -> FrontendError:
        """The error for an attribute (or input) value this conversion does not handle."""
        if value is None and attr in self.attrs:
            value = attribute_value(self.attrs[attr])
        return self.error(f"attribute {attr}={_short(value)} {why}")

    # -- attributes -----------------------------------------------------------------------

    def has_attr(self, name: str) -> bool:
        return name in self.attrs

    def attr(self, name: str, default=_NO_DEFAULT):
        """The attribute's value, else `default`, else the schema's default."""
        self._read_attrs.add(name)
        if name in self.attrs:
            return attribute_value(self.attrs[name])
        if default is not _NO_DEFAULT:
            return default
        value = schema_default(self.schema, name)
        if value is _NO_DEFAULT:
            raise self.error(f"required attribute {name!r} is missing")
        return value

    def expect(self, name: str, *allowed, why: str = "is not supported"):
        """The attribute's value, which must be one of `allowed` (else an error naming it)."""
        value = self.attr(name)
        if not any(same_value(value, a) for a in allowed):
            raise self.unsupported(name, value, why)
        return value

    # -- inputs ---------------------------------------------------------------------------

    def has_input(self, index: int) -> bool:
        """Whether input `index` is given (present and not the empty name)."""
        return index < len(self.inputs) and self.inputs[index] != ""

    def input_name(self, index: int) -> str:
        return self.inputs[index] if index < len(self.inputs) else ""

    def input(self, index: int, default=None):
        """Input `index` as a Relax expression (constants materialized), or `default`."""
        self._read_inputs.add(index)
        if not self.has_input(index):
            return default
        return self.importer.expr(self.inputs[index])

    def value(self, index: int):
        """Input `index` as it is held: a Relax expression, a sequence (list), or None."""
        self._read_inputs.add(index)
        if not self.has_input(index):
            return None
        return self.importer.value(self.inputs[index])

    def const(self, index: int, what: str | None = None):
        """Input `index` as a numpy array if it is known at import time, else None.

        With `what`, a value that is not known raises instead (naming `what`)."""
        self._read_inputs.add(index)
        if not self.has_input(index):
            return None
        value = self.importer.known_numeric(self.inputs[index])
        if value is None and what is not None:
            raise self.error(f"{what} (input {self.inputs[index]!r}) must be a constant")
        return value

    def known(self, index: int):
        """Input `index` as a numpy array of numbers or PrimExprs if known, else None."""
        self._read_inputs.add(index)
        if not self.has_input(index):
            return None
        return self.importer.known(self.inputs[index])

    def ints(self, index: int, name: str = "value"):
        """A 0-d or 1-d integer input as a list of int64 PrimExprs: its constant or symbolic
        elements when known at import, else read from the tensor at run time."""
        self._read_inputs.add(index)
        return self.importer.int_values(self.inputs[index], name)

    def input_list(self, start: int = 0) -> list:
        """The variadic inputs from `start` as Relax expressions (empty names skipped)."""
        return [self.input(i) for i in range(start, len(self.inputs)) if self.has_input(i)]

    def all_known(self, *indices) -> list | None:
        """The known arrays of the given (default: all present) inputs, or None if any is not."""
        indices = indices or tuple(i for i in range(len(self.inputs)) if self.has_input(i))
        out = []
        for i in indices:
            if not self.has_input(i):
                out.append(None)
                continue
            value = self.importer.known(self.inputs[i])
            if value is None:
                return None
            out.append(value)
        self._read_inputs.update(indices)
        return out

    def mark_read(self, *indices) -> None:
        self._read_inputs.update(indices)

    def set_narrow(self, index: int, fmt: str) -> None:
        """Output `index` holds values of the narrow format `fmt` in its storage dtype."""
        self.narrow_outputs[index] = fmt

    # -- after conversion -----------------------------------------------------------------

    def finish(self) -> None:
        """Reject every attribute and input the conversion did not read."""
        for name, proto in self.attrs.items():
            if name in self._read_attrs:
                continue
            value = attribute_value(proto)
            default = schema_default(self.schema, name)
            if default is not _NO_DEFAULT and same_value(value, default):
                continue
            raise self.unsupported(name, value, "is not supported by graphc's conversion of this operator")
        for i, name in enumerate(self.inputs):
            if name and i not in self._read_inputs:
                label = _input_label(self.schema, i)
                raise self.error(
                    f"input {label} ({name!r}) is not supported by graphc's conversion of this operator"
                )


def _input_label(schema, index: int) -> str:
    if schema is not None and schema.inputs:
        formal = schema.inputs[min(index, len(schema.inputs) - 1)]
        return f"{index} ({formal.name})"
    return str(index)


def _short(value) -> str:
    if isinstance(value, np.ndarray):
        return f"array{list(value.shape)}" if value.size > 8 else repr(value.tolist())
    if isinstance(value, onnx.GraphProto):
        return f"<graph {value.name}>"
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


__all__ = ["CONVERTERS", "Converter", "Node", "attribute_value", "converter", "get_schema", "lookup"]
