"""The ExportedProgram importer: walks the FX graph and emits one Relax binding per value.

Placeholders become the function's parameters (user inputs first, then the parameters and
buffers when `keep_params_as_input`) or constants; each `call_function` node goes through
the converter registered for its ATen overload (graphc/frontend/torch/converters/);
symbolic sizes (`torch.export.Dim`) become `tir.Var`s with their ranges recorded in the
function attributes `tir_var_lower_bound` / `tir_var_upper_bound`; the shape of the model's
result (a tensor, a dict, ...), when it is not the flat tuple `main` returns, goes to the
attribute `output_structure` (see output_spec.py).
"""

from __future__ import annotations

import math
import operator
from collections import Counter

import numpy as np
import torch

from ... import relax, tir
from ...errors import FrontendError, UnsupportedOperatorError
from ...ir.module import IRModule
from .converters import CONVERTERS, Args, lookup, op_key
from .output_spec import output_structure

_DTYPES = {
    torch.float32: "float32",
    torch.float64: "float64",
    torch.float16: "float16",
    torch.bfloat16: "bfloat16",
    torch.int8: "int8",
    torch.int16: "int16",
    torch.int32: "int32",
    torch.int64: "int64",
    torch.uint8: "uint8",
    torch.bool: "bool",
}


def torch_dtype_name(dtype: torch.dtype) -> str:
    """graphc's name of a torch dtype; FrontendError for those graphc has no type for."""
    name = _DTYPES.get(dtype)
    if name is None:
        raise FrontendError(f"torch dtype {dtype} is not supported by graphc")
    return name


class SymbolTable:
    """sympy symbols of torch's shape environment as int64 `tir.Var`s, and expressions over them."""

    def __init__(self, range_constraints):
        self.vars: dict[str, tir.Var] = {}
        self.lower: dict[str, int] = {}
        self.upper: dict[str, int] = {}
        self._ranges = {str(sym): rng for sym, rng in (range_constraints or {}).items()}

    def var(self, name: str) -> tir.Var:
        v = self.vars.get(name)
        if v is None:
            v = self.vars[name] = tir.Var(name, "int64")
            rng = self._ranges.get(name)
            if rng is not None:
                lo, hi = rng.lower, rng.upper
                if _finite(lo):
                    self.lower[name] = int(lo)
                if _finite(hi):
                    self.upper[name] = int(hi)
        return v

    def to_prim(self, expr) -> tir.PrimExpr:
        """A PrimExpr for a sympy expression (or a Python int / torch SymInt)."""
        import sympy

        if isinstance(expr, torch.SymInt | torch.SymBool | torch.SymFloat):
            expr = expr.node.expr
        if isinstance(expr, bool):
            return tir.const(expr, "bool")
        if isinstance(expr, int):
            return tir.const(expr, "int64")
        if isinstance(expr, sympy.Integer):
            return tir.const(int(expr), "int64")
        if isinstance(expr, sympy.Symbol):
            return self.var(str(expr))
        args = [self.to_prim(a) for a in expr.args]
        name = type(expr).__name__
        if isinstance(expr, sympy.Add):
            return _fold(operator.add, args)
        if isinstance(expr, sympy.Mul):
            return _fold(operator.mul, args)
        binary = {
            "FloorDiv": tir.floordiv,
            "Mod": tir.floormod,
            "PythonMod": tir.floormod,
            "Max": tir.max,
            "Min": tir.min,
            "CleanDiv": tir.floordiv,
            "IntTrueDiv": tir.floordiv,
        }
        if name in binary:
            return _fold(binary[name], args)
        if isinstance(expr, sympy.Pow) and isinstance(expr.args[1], sympy.Integer) and expr.args[1] > 0:
            return _fold(operator.mul, [args[0]] * int(expr.args[1]))
        raise FrontendError(f"symbolic shape expression {expr} ({name}) is not supported")

    def attrs(self) -> dict:
        out = {}
        if self.lower:
            out["tir_var_lower_bound"] = dict(sorted(self.lower.items()))
        if self.upper:
            out["tir_var_upper_bound"] = dict(sorted(self.upper.items()))
        return out


def _finite(value) -> bool:
    try:
        return math.isfinite(float(value)) and abs(float(value)) < 2**62
    except (TypeError, ValueError):
        return False


def _fold(fn, args):
    out = args[0]
    for a in args[1:]:
        out = fn(out, a)
    return out


class ExportedProgramImporter:
    """One import: `from_exported_program` builds this and calls `run`."""

    def __init__(
        self, ep, keep_params_as_input: bool, unwrap_unit_return_tuple: bool, no_bind_return_tuple: bool
    ):
        self.ep = ep
        self.keep_params_as_input = keep_params_as_input
        self.unwrap_unit_return_tuple = unwrap_unit_return_tuple
        self.no_bind_return_tuple = no_bind_return_tuple
        self.symbols = SymbolTable(ep.range_constraints)
        self.bb = relax.BlockBuilder()
        self.env: dict = {}
        self._outputs: list = []  # the tensors `main` returns
        self._leaves: list = []  # per program output: its index in them, or its constant value

    # -- values ---------------------------------------------------------------------------

    def sinfo_of(self, val) -> relax.StructInfo:
        """Struct info of a FakeTensor (or a tuple/list of them, or a SymInt)."""
        if isinstance(val, torch.Tensor):
            shape = tuple(self.symbols.to_prim(d) for d in val.shape)
            return relax.TensorStructInfo(shape, torch_dtype_name(val.dtype))
        if isinstance(val, list | tuple):
            return relax.TupleStructInfo([self.sinfo_of(v) for v in val])
        if isinstance(val, torch.SymInt | int):
            return relax.PrimStructInfo(value=self.symbols.to_prim(val))
        raise FrontendError(f"cannot give struct info to a value of type {type(val).__name__}")

    def retrieve(self, value):
        """The Relax value (or Python value) of an FX argument."""
        if isinstance(value, torch.fx.Node):
            if value in self.env:
                return self.env[value]
            val = value.meta.get("val")
            if isinstance(val, torch.SymInt | torch.SymFloat | torch.SymBool):
                return self.symbols.to_prim(val)
            raise FrontendError(f"node {value.name} is used before it is defined")
        if isinstance(value, list | tuple):
            return type(value)(self.retrieve(v) for v in value)
        if isinstance(value, torch.SymInt | torch.SymFloat | torch.SymBool):
            return self.symbols.to_prim(value)
        return value

    def emit(self, expr, name_hint: str = "") -> relax.Var:
        return self.bb.emit(expr, name_hint)

    # -- the graph ------------------------------------------------------------------------

    def check_supported(self, graph) -> None:
        """One error listing every ATen operator without a converter, with counts."""
        missing: Counter = Counter()
        first: dict = {}
        for node in graph.nodes:
            if node.op == "call_function" and not _is_symbolic(node) and lookup(node.target) is None:
                key = _op_name(node.target)
                missing[key] += 1
                first.setdefault(key, node)
            elif node.op not in ("placeholder", "call_function", "output", "get_attr"):
                raise FrontendError(f"FX node kind {node.op!r} ({node.name}) is not supported")
        if missing:
            lines = [
                f"  {name}: {count} use(s), first at node {first[name].name!r} ({_node_text(first[name])})"
                for name, count in sorted(missing.items())
            ]
            raise UnsupportedOperatorError(
                f"the program uses {len(missing)} operator(s) graphc cannot import yet:\n" + "\n".join(lines)
            )

    def run(self) -> IRModule:
        ep = self.ep
        graph = ep.graph
        self.check_supported(graph)
        specs = {spec.arg.name: spec for spec in ep.graph_signature.input_specs}
        user_params, weight_params, weight_values = [], [], []
        for node in graph.nodes:
            if node.op != "placeholder":
                continue
            spec = specs.get(node.name)
            kind = spec.kind.name if spec is not None else "USER_INPUT"
            if kind == "USER_INPUT":
                val = node.meta.get("val")
                if not isinstance(val, torch.Tensor):
                    raise FrontendError(
                        f"input {node.name!r} is a {type(val).__name__}; only tensor inputs are supported"
                    )
                var = relax.Var(node.name, self.sinfo_of(val))
                user_params.append(var)
                self.env[node] = var
                continue
            tensor = self._weight(spec)
            if self.keep_params_as_input and kind in ("PARAMETER", "BUFFER"):
                var = relax.Var(node.name, self.sinfo_of(tensor))
                weight_params.append(var)
                weight_values.append(relax.const(_numpy(tensor), torch_dtype_name(tensor.dtype)))
                self.env[node] = var
            else:
                self.env[node] = relax.const(_numpy(tensor), torch_dtype_name(tensor.dtype))
        attrs = {"num_input": len(user_params)}
        if self.keep_params_as_input:
            attrs["params"] = weight_values
        with self.bb.function("main", user_params + weight_params, attrs=attrs):
            with self.bb.dataflow():
                output = None
                for node in graph.nodes:
                    if node.op == "call_function":
                        value = self.convert(node)
                        # tuples of vars stay unbound: getitem on them picks the var itself
                        if isinstance(value, relax.Call | relax.TupleGetItem):
                            value = self.emit(value)
                        self.env[node] = value
                    elif node.op == "output":
                        output = self._output(node)
                    elif node.op == "get_attr":
                        self.env[node] = relax.const(_numpy(getattr(ep.graph_module, node.target)))
            self.bb.emit_func_output(output)
        mod = self.bb.get()
        extra = self.symbols.attrs()
        unwrapped = self.unwrap_unit_return_tuple and len(self._outputs) == 1
        structure = output_structure(ep, self._leaves, len(self._outputs), unwrapped)
        if structure is not None:  # the model returns more than a flat tuple: vm["main"] rebuilds it
            extra["output_structure"] = structure
        if extra:
            func = mod["main"]
            mod["main"] = func.replace(attrs={**func.attrs, **extra})
        return mod

    def _weight(self, spec) -> torch.Tensor:
        target = spec.target
        ep = self.ep
        if target in ep.state_dict:
            return ep.state_dict[target]
        if target in ep.constants:
            value = ep.constants[target]
            return value if isinstance(value, torch.Tensor) else torch.as_tensor(value)
        raise FrontendError(f"cannot find the value of {spec.kind.name.lower()} {target!r}")

    def convert(self, node):
        if _is_symbolic(node):
            return self.symbols.to_prim(node.meta["val"])
        converter = lookup(node.target)
        args = Args(self, node)
        result = converter(self, args)
        args.check_all_used()
        return result

    def _output(self, node):
        """The function's result: the tuple of the program's output tensors. A constant output
        (a None, a number) is left out of it and kept in `self._leaves` for the output structure."""
        outputs = self._outputs = []
        self._leaves = []
        for value in (self.retrieve(o) for o in node.args[0]):
            if isinstance(value, relax.Expr):
                self._leaves.append(len(outputs))
                outputs.append(value)
            elif value is None or isinstance(value, bool | int | float | str):
                self._leaves.append(None if value is None else ["const", value])
            else:
                raise FrontendError(f"program output {value!r} is not a tensor")
        if self.unwrap_unit_return_tuple and len(outputs) == 1:
            return self.bb.emit_output(outputs[0])
        if self.no_bind_return_tuple:
            return relax.Tuple([self.bb.emit_output(o) for o in outputs])
        return self.bb.emit_output(relax.Tuple(outputs))


def _numpy(tensor: torch.Tensor) -> np.ndarray:
    tensor = tensor.detach().cpu()
    if tensor.dtype == torch.bfloat16:
        import ml_dtypes

        return tensor.view(torch.int16).numpy().view(ml_dtypes.bfloat16).copy()
    return tensor.numpy().copy()


def _is_symbolic(node) -> bool:
    """A node computing a size (sym_size, arithmetic on SymInts): its value is a PrimExpr."""
    if node.op == "call_function" and op_key(node.target)[1] in ("aten.item", "aten._local_scalar_dense"):
        return False  # a tensor's value read back as a number: data-dependent, refused by its converter
    val = node.meta.get("val")
    return isinstance(val, torch.SymInt | torch.SymFloat | torch.SymBool | int) and not isinstance(val, bool)


def _op_name(target) -> str:
    return op_key(target)[0]


def _node_text(node) -> str:
    return node.format_node() if hasattr(node, "format_node") else str(node)


__all__ = ["CONVERTERS", "ExportedProgramImporter", "torch_dtype_name"]
