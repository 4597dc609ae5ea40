"""The ONNX graph importer: one Relax binding per ONNX value, through the converter table.

Values are held by name in a chain of scopes (a subgraph sees its parents' values). A value
is a Relax expression, a `Known` array (a constant, or a small integer array of symbolic
sizes that shape computations fold into at import), a Python list (an ONNX sequence), or
None (an empty optional). Graph inputs and initializers become the parameters and constants
of `main` in `graph_inputs`. Nodes without a converter but with an ONNX function
body (model-local functions, and the schema's own function definitions) are expanded into
their body.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter

import numpy as np
import onnx

from ... import relax, tir
from ...errors import FrontendError, GraphcError, UnsupportedOperatorError
from ...ir.module import IRModule
from ...tir.arith import POS_INF, Analyzer, ConstIntBound
from .dtypes import as_storage, elem_type_name, graphc_dtype, numpy_dtype
from .functions import expand_function, schema_function
from .graph_inputs import declare_inputs
from .model import tensor_value
from .registry import Node, get_schema, lookup, normalize_domain

CONTROL_FLOW = {"If", "Loop", "Scan"}
# operators that read narrow-typed (float8, int4, ...) tensors; those that only move elements
# pass the input's narrow type on to their outputs
NARROW_AWARE = {"Cast", "CastLike", "QuantizeLinear", "DequantizeLinear", "Shape", "Size"}
NARROW_MOVING = {
    "Identity",
    "Reshape",
    "Flatten",
    "Squeeze",
    "Unsqueeze",
    "Transpose",
    "Concat",
    "Gather",
    "Slice",
    "Split",
    "Expand",
    "Tile",
}
_ACTIVE: list = []  # the importers running (innermost last): converters emit through the top one


def active_importer() -> GraphImporter:
    if not _ACTIVE:
        raise FrontendError("ONNX converters run only inside an import (GraphImporter.run)")
    return _ACTIVE[-1]


class Known:
    """A value known at import: a numpy array of numbers, or (dtype object) of int PrimExprs."""

    __slots__ = ("array", "dtype", "expr")

    def __init__(self, array: np.ndarray, dtype: str | None = None, expr=None):
        if not isinstance(array, np.ndarray):  # numpy gives 0-d results as scalars: a PrimExpr, a number
            array = np.array(array, dtype=object) if isinstance(array, tir.PrimExpr) else np.asarray(array)
        self.array = array
        self.dtype = dtype or _dtype_of_array(array)
        self.expr = expr

    @property
    def is_numeric(self) -> bool:
        return self.array.dtype != object


def _dtype_of_array(array: np.ndarray) -> str:
    if array.dtype == object:
        return "int64"
    name = str(array.dtype)
    return "bfloat16" if name == "bfloat16" else name


def simplify_known(array: np.ndarray) -> np.ndarray:
    """An object array of PrimExprs simplified; numeric when every element became a constant."""
    if array.dtype != object:
        return array
    analyzer = Analyzer()
    flat = []
    numeric = True
    for v in array.reshape(-1):
        if isinstance(v, tir.PrimExpr):
            v = analyzer.simplify(v)
            if isinstance(v, tir.IntImm):
                v = int(v.value)
        if isinstance(v, np.integer):
            v = int(v)
        numeric = numeric and isinstance(v, int)
        flat.append(v)
    if numeric:
        return np.array(flat, dtype="int64").reshape(array.shape)
    out = np.empty(len(flat), dtype=object)
    out[:] = flat
    return out.reshape(array.shape)


_IDENT = re.compile(r"[^0-9a-zA-Z_]")


def sanitize(name: str) -> str:
    """`name` as a Python identifier (what the script printer can print)."""
    out = _IDENT.sub("_", name) or "v"
    return f"v{out}" if out[0].isdigit() else out


class GraphImporter:
    """One import of one model: `from_onnx` builds this and calls `run`."""

    def __init__(
        self,
        model: onnx.ModelProto,
        shape_dict=None,
        dtype_dict=None,
        opset=None,
        keep_params_in_input: bool = False,
        sanitize_input_names: bool = True,
    ):
        self.model = model
        self.shape_dict = dict(shape_dict or {})
        self.dtype_dict = dtype_dict
        self.keep_params_in_input = keep_params_in_input
        self.sanitize_input_names = sanitize_input_names
        self.opsets = {normalize_domain(o.domain): o.version for o in model.opset_import}
        if opset is not None:
            self.opsets[""] = int(opset)
        self.opsets.setdefault("", 1)
        self.functions = {(normalize_domain(f.domain), f.name): f for f in model.functions}
        self.bb = relax.BlockBuilder()
        self.scopes: list[dict] = [{}]
        self.dims: dict[str, tir.Var] = {}
        self.use_dataflow = True
        self._counter = itertools.count()
        self._int_cache: dict[str, list] = {}
        self.runtime_vars: set = set()  # variables bound to values read from tensors at run time
        self.definitions: dict = {}  # variable made by bind_prims -> the expression it stands for
        self.size_vars: set = set()  # variables that stand for sizes (never negative)
        self.narrow: dict[str, str] = {}  # value name -> narrow format (dtypes.NARROW) of its storage
        self.branch_depth = 0  # > 0 while building the body of an If branch or a loop

    # -- values ---------------------------------------------------------------------------

    def lookup_value(self, name: str):
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        raise FrontendError(f"the graph uses value {name!r} before any node or input defines it")

    def is_defined(self, name: str) -> bool:
        return any(name in scope for scope in self.scopes)

    def define(self, name: str, value) -> None:
        if name:
            self.scopes[-1][name] = value

    def value(self, name: str):
        """The value as held (Relax expression, list for a sequence, None for an empty optional)."""
        value = self.lookup_value(name)
        if isinstance(value, Known):
            return self.materialize(value)
        return value

    def expr(self, name: str):
        """The value of `name` as a Relax expression (a tensor)."""
        value = self.value(name)
        if isinstance(value, list):
            raise FrontendError(f"value {name!r} is a sequence where a tensor is expected")
        if value is None:
            raise FrontendError(f"value {name!r} is an empty optional where a tensor is expected")
        return value

    def known(self, name: str) -> np.ndarray | None:
        """The array of `name` if it is known at import (numbers or int PrimExprs), else None."""
        value = self.lookup_value(name)
        if isinstance(value, Known):
            return value.array
        if isinstance(value, relax.Constant):
            return value.data.numpy()
        return None

    def known_numeric(self, name: str) -> np.ndarray | None:
        array = self.known(name)
        return None if array is None or array.dtype == object else array

    def narrow_of(self, name: str) -> str | None:
        """The narrow format (`float8_e4m3fn`, `int4`, ...) a value's storage holds, or None."""
        return self.narrow.get(name)

    def known_dtype(self, name: str) -> str | None:
        value = self.lookup_value(name)
        if isinstance(value, Known):
            return value.dtype
        return None

    def materialize(self, known: Known):
        """The Relax expression of a known value (a constant, or a tensor built from sizes)."""
        if known.expr is not None:
            return known.expr
        array = known.array
        if array.dtype != object:
            known.expr = relax.const(array, known.dtype)
            return known.expr
        values = [v if isinstance(v, tir.PrimExpr) else tir.const(int(v), "int64") for v in array.reshape(-1)]
        values = [v if v.dtype == "int64" else tir.Cast("int64", v) for v in values]
        tensor = self.bb.emit(relax.op.shape_to_tensor(relax.ShapeExpr(values)))
        if array.ndim != 1:
            tensor = self.bb.emit(relax.op.reshape(tensor, relax.ShapeExpr(list(array.shape))))
        if known.dtype != "int64":
            tensor = self.bb.emit(relax.op.astype(tensor, known.dtype))
        if self.branch_depth == 0:  # a var bound inside a branch is not visible after it
            known.expr = tensor
        return tensor

    def int_values(self, name: str, what: str = "value") -> list:
        """A 0-d or 1-d integer tensor as int64 PrimExprs: known elements at import, else new
        symbolic variables bound at run time (`tensor_to_shape` + `match_cast`)."""
        array = self.known(name)
        if array is not None:
            if array.dtype != object and not np.issubdtype(array.dtype, np.integer):
                raise FrontendError(f"{what} {name!r} must hold integers, got {array.dtype}")
            return [
                v if isinstance(v, tir.PrimExpr) else tir.const(int(v), "int64") for v in array.reshape(-1)
            ]
        if name in self._int_cache:
            return self._int_cache[name]
        dims = self.int_values_of(self.expr(name), f"{what} {name!r}", sanitize(name))
        if self.branch_depth == 0:
            self._int_cache[name] = dims
        return dims

    def int_values_of(self, tensor, what: str = "value", hint: str = "v") -> list:
        """The elements of a 0-d or 1-d integer tensor computed at run time, as new symbolic
        variables (`tensor_to_shape` + `match_cast`)."""
        sinfo = tensor.struct_info
        if not isinstance(sinfo, relax.TensorStructInfo) or sinfo.ndim not in (0, 1):
            raise FrontendError(f"{what} must be a 0-d or 1-d integer tensor, got {sinfo}")
        if sinfo.ndim == 0:
            tensor = self.bb.emit(relax.op.reshape(tensor, relax.ShapeExpr([1])))
        length = tensor.struct_info.shape_values[0]
        if not isinstance(length, tir.IntImm):
            raise FrontendError(
                f"{what} has a length known only at run time ({length}); graphc needs the "
                f"number of its elements when it imports the model"
            )
        if tensor.struct_info.dtype != "int64":
            tensor = self.bb.emit(relax.op.astype(tensor, "int64"))
        shape = self.bb.emit(relax.op.tensor_to_values(tensor))  # offsets, pads, axes: any sign
        dims = [self.fresh_var(hint) for _ in range(length.value)]
        self.runtime_vars.update(dims)
        self.bb.match_cast(shape, relax.ShapeStructInfo(dims))
        return dims

    def bind_prims(self, values, hint: str = "v", sizes: bool = False) -> list:
        """`values` (int64 PrimExprs) with every compound expression replaced by a new variable
        the VM computes once from the others (a `match_cast` of the shape of them), so that
        kernels see plain variables instead of the expressions. `sizes`: the values are sizes
        (never negative), so the new variables join `size_vars`; each new variable's expression
        is kept in `definitions` for proofs about sizes (`common.broadcast_size`)."""
        analyzer = self.analyzer()
        values = [
            analyzer.simplify(v if isinstance(v, tir.PrimExpr) else tir.const(int(v), "int64"))
            for v in values
        ]
        compound = [i for i, v in enumerate(values) if not isinstance(v, tir.IntImm | tir.Var)]
        if not compound:
            return values
        fresh = [self.fresh_var(hint, size=sizes) for _ in compound]
        for i, var in zip(compound, fresh):
            self.definitions[var] = values[i]
        self.bb.match_cast(relax.ShapeExpr([values[i] for i in compound]), relax.ShapeStructInfo(fresh))
        out = list(values)
        for i, var in zip(compound, fresh):
            out[i] = var
        return out

    def fresh_var(self, hint: str, size: bool = False) -> tir.Var:
        """A new int64 variable; one of `size_vars` (never negative) when it stands for a size."""
        name = f"{sanitize(hint)}_{next(self._counter)}"
        return self.size_var(name) if size else tir.Var(name, "int64")

    def size_var(self, name: str) -> tir.Var:
        """A new int64 variable that stands for a size. (A plain Var, not a SizeVar: the
        printed script of a kernel taking it as a parameter could not say which it is.)"""
        var = tir.Var(name, "int64")
        self.size_vars.add(var)
        return var

    def analyzer(self) -> Analyzer:
        """An Analyzer that knows the sizes of the import (`size_vars`) are never negative."""
        analyzer = Analyzer()
        for var in self.size_vars:
            analyzer.update(var, ConstIntBound(0, POS_INF))
        return analyzer

    def emit(self, expr, name_hint: str = ""):
        return self.bb.emit(expr, name_hint)

    # -- the graph ------------------------------------------------------------------------

    def check_supported(self) -> None:
        """One UnsupportedOperatorError listing every operator without a conversion."""
        missing: Counter = Counter()
        first: dict = {}
        for node, opsets in _walk_nodes(self.model.graph, self.opsets, self.functions):
            if self.convertible(node, opsets):
                continue
            domain = normalize_domain(node.domain)
            key = (node.op_type, domain or "ai.onnx", opsets.get(domain, 1))
            missing[key] += 1
            first.setdefault(key, node.name or f"{node.op_type}({', '.join(node.output)})")
        if missing:
            lines = [
                f"  {op} (domain {domain}, opset {version}): {count} node(s), "
                f"first {first[(op, domain, version)]!r}"
                for (op, domain, version), count in sorted(missing.items())
            ]
            raise UnsupportedOperatorError(
                f"the model uses {len(missing)} operator(s) graphc cannot import yet:\n" + "\n".join(lines)
            )

    def convertible(self, node, opsets) -> bool:
        domain = normalize_domain(node.domain)
        if (domain, node.op_type) in self.functions:
            return True
        version = opsets.get(domain)
        if version is None:
            return False
        schema = get_schema(node.op_type, version, domain)
        op_version = schema.since_version if schema is not None else version
        if lookup(domain, node.op_type, op_version) is not None:
            return True
        return schema is not None and (schema.has_function or schema.has_context_dependent_function)

    def run(self) -> IRModule:
        _ACTIVE.append(self)
        try:
            return self._run()
        finally:
            _ACTIVE.pop()

    def _run(self) -> IRModule:
        graph = self.model.graph
        self.check_supported()
        initializers = {t.name: t for t in graph.initializer}
        constants = set(initializers) | {o for n in graph.node if n.op_type == "Constant" for o in n.output}
        self.use_dataflow = not any(
            _needs_statements(n, constants) or self._has_control_flow(n, o)
            for n, o in _walk_nodes(graph, self.opsets, self.functions)
        )
        inputs = declare_inputs(self, graph, initializers)
        params, weight_params, sequences = inputs.params, inputs.weights, inputs.sequences
        attrs = {"num_input": len(params)}
        if self.keep_params_in_input:
            attrs["params"] = inputs.weight_values
        with self.bb.function("main", params + weight_params, attrs=attrs):
            for name, var in sequences:  # a sequence input: the list of its elements
                fields = len(var.struct_info.fields)
                self.define(name, [self.emit(relax.TupleGetItem(var, i)) for i in range(fields)])
            if self.use_dataflow:
                with self.bb.dataflow():
                    output = self._body(graph, emit_output=True)
            else:
                output = self._body(graph, emit_output=False)
            self.bb.emit_func_output(output)
        return self.bb.get()

    def _has_control_flow(self, proto, opsets) -> bool:
        """Whether the node is an If/Loop/Scan or expands into a function body holding one (a
        Relax If cannot sit in a dataflow block)."""
        if proto.op_type in CONTROL_FLOW:
            return True
        domain = normalize_domain(proto.domain)
        body = self.functions.get((domain, proto.op_type))
        version = opsets.get(domain)
        if body is None and version is not None:
            schema = get_schema(proto.op_type, version, domain)
            if schema is not None and schema.has_function:
                if lookup(domain, proto.op_type, schema.since_version) is None:
                    body = schema_function(self, proto, schema, opsets)
        if body is None:
            return False
        return any(self._has_control_flow(n, opsets) for n, _ in _walk_nodes(body, opsets, self.functions))

    def _body(self, graph, emit_output: bool):
        self.convert_nodes(graph.node, self.opsets)
        outputs = [self.output_value(o.name) for o in graph.output]
        if emit_output:
            outputs = [self.bb.emit_output(o) for o in outputs]
        if len(outputs) == 1:
            return outputs[0]
        return relax.Tuple(outputs)

    def output_value(self, name: str):
        value = self.value(name)
        if isinstance(value, list):
            return relax.Tuple([self.output_value_of(v, name) for v in value])
        if value is None:  # an empty optional: the VM returns None
            return self.emit(relax.op.null_value())
        return value

    def convert_nodes(self, nodes, opsets) -> None:
        for proto in nodes:
            self.convert_node(proto, opsets)

    def convert_node(self, proto, opsets) -> None:
        domain = normalize_domain(proto.domain)
        if (domain, proto.op_type) in self.functions:
            expand_function(self, proto, self.functions[(domain, proto.op_type)])
            return
        version = opsets.get(domain)
        schema = get_schema(proto.op_type, version, domain) if version is not None else None
        op_version = schema.since_version if schema is not None else (version or 1)
        conv = lookup(domain, proto.op_type, op_version)
        if conv is None:
            body = schema_function(self, proto, schema, opsets) if schema is not None else None
            if body is None:
                where = f"{domain or 'ai.onnx'}, opset {version}"
                raise UnsupportedOperatorError(
                    f"the model uses 1 operator(s) graphc cannot import yet:\n  {proto.op_type} ({where}): "
                    f"1 node(s), first {proto.name!r}"
                )
            expand_function(self, proto, body, schema)
            return
        node = Node(self, proto, op_version, schema)
        narrow_inputs = [self.narrow[n] for n in proto.input if n in self.narrow]
        if narrow_inputs and proto.op_type not in NARROW_AWARE | NARROW_MOVING:
            raise FrontendError(
                f"{node.where}: inputs of type {narrow_inputs[0]} are supported by Cast, "
                f"QuantizeLinear, DequantizeLinear and data movement only"
            )
        try:
            result = conv.fn(node)
            node.finish()
        except GraphcError as exc:
            if node.where in str(exc):
                raise
            raise type(exc)(f"{node.where}: {exc}") from exc
        self.bind_outputs(node, result)
        for i, fmt in node.narrow_outputs.items():
            if i < len(proto.output) and proto.output[i]:
                self.narrow[proto.output[i]] = fmt
        if narrow_inputs and proto.op_type in NARROW_MOVING:
            for name in proto.output:
                self.narrow[name] = narrow_inputs[0]

    def bind_outputs(self, node: Node, result) -> None:
        names = node.outputs
        if isinstance(result, tuple):
            values = list(result)
        elif len(names) > 1 and isinstance(result, relax.Expr):
            tuple_value = self.emit(result) if not isinstance(result, relax.Tuple) else result
            count = len(tuple_value.struct_info.fields)
            values = [relax.TupleGetItem(tuple_value, i) for i in range(count)]
        else:
            values = [result]
        for i, name in enumerate(names):
            if not name:
                continue
            if i >= len(values):
                raise node.error(f"graphc's conversion does not produce output {name!r}")
            self.define(name, self.bind(values[i]))

    def bind(self, value):
        if isinstance(value, np.generic):  # a numpy scalar from folding a 0-d array
            value = np.asarray(value)
        if isinstance(value, np.ndarray):
            return Known(simplify_known(value))
        if isinstance(value, Known):
            value.array = simplify_known(value.array)
            return value
        if isinstance(value, list):
            return [self.bind(v) for v in value]
        if isinstance(value, relax.Call | relax.TupleGetItem) or (
            isinstance(value, relax.Tuple) and not self.use_dataflow
        ):
            return self.emit(value)
        return value

    # -- subgraphs --------------------------------------------------------------------------

    def graph_outputs(self, graph, bindings: dict | None = None) -> list:
        """Convert the nodes of a subgraph in a scope of its own (its inputs bound to
        `bindings`) into the current block; the values of its outputs."""
        scope = dict(bindings or {})
        for tensor in graph.initializer:
            array = as_storage(tensor_value(tensor, "initializer"))
            scope[tensor.name] = Known(array, graphc_dtype(tensor.data_type, f"initializer {tensor.name!r}"))
        self.scopes.append(scope)
        try:
            self.convert_nodes(graph.node, self.opsets)
            return [self.lookup_value(o.name) for o in graph.output]
        finally:
            self.scopes.pop()

    def branch(self, graph, bindings: dict | None = None) -> relax.SeqExpr:
        """A subgraph as a SeqExpr of its own (an If branch, a loop body)."""
        self.bb.begin_scope()
        self.branch_depth += 1
        try:
            values = self.graph_outputs(graph, bindings)
            exprs = [self.output_value_of(v, o.name) for v, o in zip(values, graph.output)]
            body = exprs[0] if len(exprs) == 1 else self.emit(relax.Tuple(exprs))
        except BaseException:
            self.branch_depth -= 1
            self.bb.discard_scope()
            raise
        self.branch_depth -= 1
        blocks = self.bb.end_scope()
        return relax.SeqExpr(blocks, body)

    def output_value_of(self, value, name: str):
        if isinstance(value, Known):
            value = self.materialize(value)
        if isinstance(value, list):
            return relax.Tuple([self.output_value_of(v, name) for v in value])
        if value is None:  # an empty optional (an If branch may return one, the other a value)
            return self.emit(relax.op.null_value())
        return value

    def refine(self, value, hint: str = "dim"):
        """A tensor whose shape is known only by its rank, match_cast to new symbolic sizes so
        that the operators after it see a shape."""
        sinfo = value.struct_info
        if isinstance(sinfo, relax.TensorStructInfo) and sinfo.shape_values is None and sinfo.ndim >= 0:
            dims = [self.fresh_var(hint, size=True) for _ in range(sinfo.ndim)]
            return self.bb.match_cast(value, relax.TensorStructInfo(dims, sinfo.dtype))
        return value


# operator -> the input that, computed at run time, makes its conversion emit a run-time
# check (`assert_op`, which is not pure) or an `If`
RUN_TIME_CHECKED = {"Dropout": 2, "SequenceInsert": 2, "SplitToSequence": 1}


def _needs_statements(node, constants) -> bool:
    """Whether a node's conversion leaves the dataflow block: control flow, and the operators
    of RUN_TIME_CHECKED with that input not a constant."""
    if node.op_type in CONTROL_FLOW:
        return True
    index = RUN_TIME_CHECKED.get(node.op_type)
    return index is not None and len(node.input) > index and node.input[index] not in ("", *constants)


def _walk_nodes(graph, opsets, functions):
    """Every node of `graph` and of its subgraphs, with the opsets in force for it."""
    for node in graph.node:
        yield node, opsets
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                yield from _walk_nodes(attr.g, opsets, functions)
            elif attr.type == onnx.AttributeProto.GRAPHS:
                for g in attr.graphs:
                    yield from _walk_nodes(g, opsets, functions)


__all__ = ["GraphImporter", "Known", "elem_type_name", "numpy_dtype", "sanitize", "simplify_known"]
