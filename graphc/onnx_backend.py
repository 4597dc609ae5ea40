"""graphc as an ONNX backend (`onnx.backend.base.Backend`): what `onnx.backend.test` runs;
users reach it as `graphc.frontend.onnx.backend`.

It compiles and runs models, so it lives with the runners above the layers (DESIGN.md:
frontends produce IR, never executables), not in graphc/frontend.

`prepare(model)` imports the model, compiles it for the CPU with `graphc.compile` and
returns a `GraphcRep` whose `run(inputs)` calls the VM; `run_model` and `run_node` are
the one-shot forms.

>>> import numpy as np
>>> from onnx import TensorProto, helper
>>> from graphc.frontend.onnx import backend
>>> node = helper.make_node("Add", ["a", "b"], ["c"])
>>> backend.run_node(node, [np.ones(3, "float32"), np.arange(3, dtype="float32")])
[array([1., 2., 3.], dtype=float32)]
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx.backend.base import Backend, BackendRep

from .errors import FrontendError
from .frontend.onnx.dtypes import NARROW, as_storage, from_storage


def to_numpy(value):
    """A VM result as numpy (tuples as lists: ONNX sequences and multiple outputs; None: an
    empty optional)."""
    if value is None:
        return None
    if isinstance(value, tuple | list):
        return [to_numpy(v) for v in value]
    if hasattr(value, "numpy"):
        return value.numpy()
    return np.asarray(value)


class GraphcRep(BackendRep):
    """A compiled model: `run(inputs)` returns its outputs as numpy arrays, in graph order."""

    def __init__(self, model: onnx.ModelProto, target: str = "llvm", **import_kwargs):
        self.model = model
        self.target = target
        self.import_kwargs = import_kwargs
        initializers = {t.name for t in model.graph.initializer}
        inputs = [i for i in model.graph.input if i.name not in initializers]
        self.input_names = [i.name for i in inputs]
        self.output_names = [o.name for o in model.graph.output]
        # narrow types (float8, int4, ...) travel as their storage (dtypes.NARROW)
        self.output_types = [
            o.type.tensor_type.elem_type if o.type.HasField("tensor_type") else 0 for o in model.graph.output
        ]
        # a sequence input's length and element shapes are fixed when the model is compiled:
        # such models compile at their first run, once per distinct sequence layout
        self.sequence_inputs = [i.name for i in inputs if _holds_sequence(i.type)]
        # so is whether an optional input is empty (it is then no argument of the function)
        self.optional_inputs = [i.name for i in inputs if i.type.HasField("optional_type")]
        self._compiled: dict = {}
        self.vm = None if self.sequence_inputs or self.optional_inputs else self._compile({})

    def _compile(self, shape_dict: dict):
        import graphc
        from graphc import relax

        from .frontend.onnx import from_onnx

        kwargs = dict(self.import_kwargs)
        if shape_dict:
            kwargs["shape_dict"] = {**kwargs.get("shape_dict", {}), **shape_dict}
        self.module = from_onnx(self.model, **kwargs)
        self.executable = graphc.compile(self.module, self.target)
        return relax.VirtualMachine(self.executable, graphc.cpu())

    def run(self, inputs, **kwargs):
        if isinstance(inputs, dict):
            inputs = [inputs[name] for name in self.input_names]
        elif not isinstance(inputs, list | tuple):
            inputs = [inputs]
        if len(inputs) != len(self.input_names):
            raise ValueError(
                f"the model takes {len(self.input_names)} input(s) {self.input_names}, got {len(inputs)}"
            )
        vm = self.vm
        if self.sequence_inputs or self.optional_inputs:
            layout = {
                name: None if value is None else [list(np.shape(a)) for a in value]
                for name, value in zip(self.input_names, inputs)
                if name in self.sequence_inputs or (name in self.optional_inputs and value is None)
            }
            key = repr(sorted(layout.items()))
            if key not in self._compiled:
                self._compiled[key] = self._compile(layout)
            vm = self._compiled[key]
        args = [
            tuple(as_storage(np.asarray(e)) for e in a)
            if n in self.sequence_inputs
            else as_storage(np.asarray(a))
            for n, a in zip(self.input_names, inputs)
            if not (a is None and n in self.optional_inputs)
        ]
        out = vm["main"](*args)
        outs = [to_numpy(out)] if len(self.output_names) == 1 else to_numpy(out)
        return [
            from_storage(o, t) if t in NARROW and isinstance(o, np.ndarray) else o
            for o, t in zip(outs, self.output_types)
        ]


def _holds_sequence(type_proto) -> bool:
    """Whether a graph input is a sequence, or an optional of one."""
    if type_proto.HasField("optional_type"):
        type_proto = type_proto.optional_type.elem_type
    return type_proto.HasField("sequence_type")


class GraphcBackend(Backend):
    """The ONNX backend interface over graphc (CPU)."""

    @classmethod
    def is_compatible(cls, model, device: str = "CPU", **kwargs) -> bool:
        return device == "CPU"

    @classmethod
    def prepare(cls, model, device: str = "CPU", **kwargs):
        if not cls.supports_device(device):
            raise FrontendError(f"graphc's ONNX backend runs on the CPU, not {device}")
        return GraphcRep(model, **kwargs)

    @classmethod
    def run_model(cls, model, inputs, device: str = "CPU", **kwargs):
        return cls.prepare(model, device, **kwargs).run(inputs)

    @classmethod
    def run_node(cls, node, inputs, device: str = "CPU", outputs_info=None, **kwargs):
        """Run one node on `inputs` (numpy arrays), its input types taken from the arrays."""
        from onnx import helper

        from .frontend.onnx.dtypes import onnx_elem_type

        def info(name, array):
            return helper.make_tensor_value_info(
                name, helper.np_dtype_to_tensor_dtype(array.dtype), list(array.shape)
            )

        arrays = [np.asarray(a) for a in inputs]
        graph_inputs = [info(name, a) for name, a in zip(node.input, arrays) if name]
        outs = [onnx.ValueInfoProto(name=name) for name in node.output]
        if outputs_info is not None:
            outs = [
                helper.make_tensor_value_info(
                    name, d if isinstance(d, int) else onnx_elem_type(str(np.dtype(d))), s
                )
                for name, (d, s) in zip(node.output, outputs_info)
            ]
        graph = helper.make_graph([node], "run_node", graph_inputs, outs)
        opset = helper.make_opsetid("", onnx.defs.onnx_opset_version())
        model = _typed_outputs(helper.make_model(graph, opset_imports=[opset]))
        return cls.run_model(model, [a for name, a in zip(node.input, arrays) if name], device, **kwargs)

    @classmethod
    def supports_device(cls, device: str) -> bool:
        return device == "CPU"


def _typed_outputs(model):
    """Graph outputs without a type get the one ONNX's shape inference finds (the checker
    requires one)."""
    inferred = onnx.shape_inference.infer_shapes(model)
    types = {v.name: v.type for v in list(inferred.graph.value_info) + list(inferred.graph.output)}
    for out in model.graph.output:
        if not out.HasField("type"):
            found = types.get(out.name)
            if found is None or found.WhichOneof("value") is None:
                raise FrontendError(
                    f"run_node: cannot infer the type of output {out.name!r}; pass outputs_info"
                )
            out.type.CopyFrom(found)
    return model


prepare = GraphcBackend.prepare
run_model = GraphcBackend.run_model
run_node = GraphcBackend.run_node
supports_device = GraphcBackend.supports_device

__all__ = ["GraphcBackend", "GraphcRep", "prepare", "run_model", "run_node", "supports_device"]
