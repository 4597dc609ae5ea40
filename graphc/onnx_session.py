"""`InferenceSession`: ONNX Runtime's session interface over graphc (import, compile, VM),
reached as `graphc.frontend.onnx.InferenceSession` (it runs models, so it lives with the
runners above the layers, not in graphc/frontend).

    sess = InferenceSession("model.onnx")
    [y] = sess.run(None, {"x": x})

The compiled executable is cached on disk under a key made of the model's bytes, the target,
the `shape_dict`/`dtype_dict` overrides and graphc's version (and its executable format), so
a second session of the same model loads the executable instead of compiling it. The cache
directory is `cache_dir`, else `$GRAPHC_CACHE_DIR/onnx`, else `~/.cache/graphc/onnx`;
`cache_dir=False` turns the cache off.

>>> import numpy as np
>>> from onnx import TensorProto, helper
>>> graph = helper.make_graph(
...     [helper.make_node("Relu", ["x"], ["y"])], "g",
...     [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 2])],
...     [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 2])])
>>> sess = InferenceSession(helper.make_model(graph), cache_dir=False)
>>> [(i.name, i.shape, i.type) for i in sess.get_inputs()]
[('x', ['n', 2], 'tensor(float)')]
>>> sess.run(None, {"x": np.array([[-1, 2]], "float32")})
[array([[0., 2.]], dtype=float32)]
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from onnx import TensorProto

from .errors import FrontendError
from .frontend.onnx.dtypes import NARROW, as_storage, from_storage
from .frontend.onnx.model import load_model
from .onnx_backend import to_numpy


@dataclass(frozen=True)
class NodeArg:
    """An input or output of the model, as ONNX Runtime describes it: its name, its shape
    (ints, `dim_param` names, None for unknown dims) and its type (`"tensor(float)"`)."""

    name: str
    shape: list
    type: str


def _node_arg(value_info) -> NodeArg:
    kind = value_info.type.WhichOneof("value")
    if kind != "tensor_type":
        return NodeArg(value_info.name, [], kind.replace("_type", "") if kind else "unknown")
    tensor = value_info.type.tensor_type
    shape = []
    if tensor.HasField("shape"):
        for d in tensor.shape.dim:
            kind = d.WhichOneof("value")
            shape.append(d.dim_value if kind == "dim_value" else d.dim_param if kind == "dim_param" else None)
    name = TensorProto.DataType.Name(tensor.elem_type).lower()
    return NodeArg(value_info.name, shape, f"tensor({name})")


def default_cache_dir() -> Path:
    root = os.environ.get("GRAPHC_CACHE_DIR")
    return Path(root) / "onnx" if root else Path.home() / ".cache" / "graphc" / "onnx"


class InferenceSession:
    """A compiled ONNX model that runs like an `onnxruntime.InferenceSession`.

    `path_or_model` is a path, a `ModelProto` or its bytes; `target` the graphc target;
    `shape_dict`/`dtype_dict` go to `from_onnx`. `cache_hit` says whether the executable came
    from the disk cache.
    """

    def __init__(self, path_or_model, target="llvm", *, shape_dict=None, dtype_dict=None, cache_dir=None):
        import graphc
        from graphc import relax

        self.model = load_model(path_or_model)
        self.target = str(target)
        graph = self.model.graph
        initializers = {t.name for t in graph.initializer}
        self._inputs = [_node_arg(i) for i in graph.input if i.name not in initializers]
        self._outputs = [_node_arg(o) for o in graph.output]
        self._output_types = [
            o.type.tensor_type.elem_type if o.type.HasField("tensor_type") else 0 for o in graph.output
        ]
        for arg in self._inputs:
            if not arg.type.startswith("tensor("):
                raise FrontendError(f"InferenceSession: input {arg.name!r} is a {arg.type}; sessions take "
                                    "tensor inputs only")
        self.cache_path = None
        if cache_dir is not False:
            key = self._cache_key(shape_dict, dtype_dict)
            self.cache_path = Path(cache_dir or default_cache_dir()) / f"{key}.gvm"
        self.executable = self._cached_executable()
        self.cache_hit = self.executable is not None
        if self.executable is None:
            from .frontend.onnx import from_onnx

            module = from_onnx(self.model, shape_dict=shape_dict, dtype_dict=dtype_dict)
            self.executable = graphc.compile(module, target)
            self._store()
        self._vm = relax.VirtualMachine(self.executable, graphc.cpu())

    def _cache_key(self, shape_dict, dtype_dict) -> str:
        from graphc import __version__
        from graphc.vm.executable import FORMAT_VERSION

        digest = hashlib.sha256(self.model.SerializeToString(deterministic=True))
        options = {"target": self.target, "shape_dict": shape_dict, "dtype_dict": dtype_dict,
                   "graphc": __version__, "format": FORMAT_VERSION}
        digest.update(json.dumps(options, sort_keys=True, default=str).encode())
        return digest.hexdigest()

    def _cached_executable(self):
        from graphc.vm.executable import Executable, ExecutableFormatError

        if self.cache_path is None or not self.cache_path.is_file():
            return None
        try:
            return Executable.load(self.cache_path)
        except (ExecutableFormatError, OSError):
            return None  # a damaged or stale entry: compile again and replace it

    def _store(self) -> None:
        if self.cache_path is None:
            return
        self.cache_path.parent.mkdir(parents=True, exist_ok=True)
        partial = self.cache_path.with_suffix(f".{os.getpid()}.tmp")
        self.executable.export_library(partial)
        os.replace(partial, self.cache_path)  # atomic: a concurrent session never reads half a file

    def get_inputs(self) -> list[NodeArg]:
        return list(self._inputs)

    def get_outputs(self) -> list[NodeArg]:
        return list(self._outputs)

    def run(self, output_names, input_feed: dict) -> list:
        """The outputs named in `output_names` (None: all, in graph order) as numpy arrays,
        for the inputs `input_feed` (`{name: array}`)."""
        names = [o.name for o in self._outputs]
        wanted = names if output_names is None else list(output_names)
        for name in wanted:
            if name not in names:
                raise ValueError(f"InferenceSession.run: the model has no output {name!r}; its outputs are "
                                 f"{names}")
        expected = [i.name for i in self._inputs]
        missing = [n for n in expected if n not in input_feed]
        unknown = [n for n in input_feed if n not in expected]
        if missing or unknown:
            raise ValueError(f"InferenceSession.run: the model takes the inputs {expected}; "
                             f"missing {missing}, unknown {unknown}")
        out = self._vm["main"](*(as_storage(np.asarray(input_feed[n])) for n in expected))
        outs = [to_numpy(out)] if len(names) == 1 else to_numpy(out)
        outs = [from_storage(o, t) if t in NARROW and isinstance(o, np.ndarray) else o
                for o, t in zip(outs, self._output_types)]
        by_name = dict(zip(names, outs))
        return [by_name[n] for n in wanted]


__all__ = ["InferenceSession", "NodeArg", "default_cache_dir"]
