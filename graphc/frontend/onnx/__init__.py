"""The ONNX frontend: `from_onnx` turns an ONNX model into a Relax IRModule whose `main`
computes the same thing.

>>> import onnx
>>> from onnx import TensorProto, helper
>>> from graphc.frontend.onnx import from_onnx
>>> graph = helper.make_graph(
...     [helper.make_node("Relu", ["x"], ["y"])], "g",
...     [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 3])],
...     [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 3])])
>>> mod = from_onnx(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))
>>> print(mod["main"].script().split("@R.function")[1])  # the function, without the import comments
<BLANKLINE>
def main(x: R.Tensor(("n", 3), dtype="float32")) -> R.Tensor(("n", 3), dtype="float32"):
    R.func_attr({"num_input": 1})
    n = T.int64()
    with R.dataflow():
        lv: R.Tensor((n, 3), dtype="float32") = R.nn.relu(x)
        gv: R.Tensor((n, 3), dtype="float32") = lv
        R.output(gv)
    return gv
"""

from __future__ import annotations

from . import (  # noqa: F401
    contrib,
    control_flow,
    conv,
    data_dependent,
    image,
    indexing,
    linalg,
    math,
    nn,
    quantize,
    recurrent,
    reduce,
    sequence,
    shape,
    signal,
    tensor,
)
from .importer import GraphImporter
from .model import is_onnx_model, load_model
from .registry import CONVERTERS, converter, lookup


def from_onnx(
    model,
    shape_dict=None,
    dtype_dict=None,
    opset=None,
    keep_params_in_input: bool = False,
    sanitize_input_names: bool = True,
):
    """Import an ONNX model (a `ModelProto`, a path, or the bytes of one) as an IRModule.

    - `shape_dict` (`{input name: [dims]}`) overrides input shapes; a dimension may be an
      int, or a string / None for a symbolic one. ONNX `dim_param` dimensions become
      `tir.Var`s named after them, unnamed unknown ones `<input>_dim<i>`: one compiled model
      serves every size.
    - `dtype_dict` (`{input name: dtype}` or one dtype for all) overrides input dtypes.
    - `opset` overrides the model's opset import of the default domain.
    - `keep_params_in_input`: initializers become parameters of `main` after the inputs
      (`num_input` counts the inputs, `params` holds the values; `graphc.frontend.detach_params`
      takes them out) instead of constants.
    - `sanitize_input_names`: input names become valid identifiers (`input.1` -> `input_1`).

    Every operator without a conversion is reported in one UnsupportedOperatorError; a
    malformed model raises a FrontendError saying what is wrong.
    """
    proto = load_model(model)
    importer = GraphImporter(proto, shape_dict, dtype_dict, opset, keep_params_in_input, sanitize_input_names)
    return importer.run()


def load(path, shape_dict=None, dtype_dict=None, **kwargs):
    """Read an ONNX file and import it: `graphc.frontend.onnx.load("model.onnx", shape_dict={...})`."""
    return from_onnx(path, shape_dict=shape_dict, dtype_dict=dtype_dict, **kwargs)


def __getattr__(name):
    # the backend and the session compile and run models: they live with the runners above the
    # layers (graphc/onnx_backend.py, graphc/onnx_session.py), looked up by name on first use
    import importlib

    if name == "backend":
        return importlib.import_module(".backend", __name__)
    if name == "InferenceSession":
        return importlib.import_module("graphc.onnx_session").InferenceSession
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["CONVERTERS", "converter", "from_onnx", "is_onnx_model", "load", "load_model", "lookup"]
