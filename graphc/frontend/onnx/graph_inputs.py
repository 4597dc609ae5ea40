"""The parameters of an imported model's `main`: its graph inputs and its initializers.

A tensor input becomes a parameter whose `dim_param` and unknown dimensions are `tir.Var`s
(one per name, shared by every input that names it; `shape_dict` overrides the model's
shape); a sequence input is a tuple of the element shapes `shape_dict` gives; an optional
input is its element, or empty when `shape_dict` maps it to None. Initializers become
`Known` constants, or parameters after the inputs (`keep_params_in_input`, their values in
`main`'s "params" attribute).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import onnx

from ... import relax, tir
from ...errors import FrontendError
from .dtypes import as_storage, graphc_dtype, narrow_format
from .model import tensor_value


@dataclass
class MainParams:
    """What `declare_inputs` made: the parameters of `main` in order (inputs, then weights)."""

    params: list = field(default_factory=list)  # relax.Vars of the graph inputs
    weights: list = field(default_factory=list)  # relax.Vars of the initializers kept as inputs
    weight_values: list = field(default_factory=list)  # their values, relax constants
    sequences: list = field(default_factory=list)  # (name, var) of each sequence input


def declare_inputs(importer, graph, initializers: dict) -> MainParams:
    """Define every graph input and initializer of `graph` in `importer`'s scope."""
    from .importer import Known

    made = MainParams()
    for value_info in graph.input:
        if value_info.name in initializers:
            continue
        if value_info.type.HasField("optional_type") and importer.shape_dict.get(value_info.name, 0) is None:
            importer.define(value_info.name, None)  # an optional input imported as empty
            continue
        var = relax.Var(param_name(importer, value_info.name), input_sinfo(importer, value_info))
        made.params.append(var)
        importer.define(value_info.name, var)
        if isinstance(var.struct_info, relax.TupleStructInfo):
            made.sequences.append((value_info.name, var))
        fmt = narrow_format(value_info.type.tensor_type.elem_type)
        if fmt is not None:
            importer.narrow[value_info.name] = fmt
    for name, tensor in initializers.items():
        array = as_storage(tensor_value(tensor, "initializer"))
        dtype = graphc_dtype(tensor.data_type, f"initializer {name!r}")
        if narrow_format(tensor.data_type) is not None:
            importer.narrow[name] = narrow_format(tensor.data_type)
        if importer.keep_params_in_input:
            var = relax.Var(param_name(importer, name), relax.TensorStructInfo(array.shape, dtype))
            made.weights.append(var)
            made.weight_values.append(relax.const(array, dtype))
            importer.define(name, Known(array, dtype, expr=var))
        else:
            importer.define(name, Known(array, dtype))
    return made


def param_name(importer, name: str) -> str:
    """The parameter's name: the input's, made an identifier if `sanitize_input_names`."""
    from .importer import sanitize

    return sanitize(name) if importer.sanitize_input_names else name


def input_sinfo(importer, value_info) -> relax.StructInfo:
    """The struct info of graph input `value_info` (see the module's docstring)."""
    name = value_info.name
    type_proto = value_info.type
    if type_proto.HasField("optional_type"):  # present: imported as its element
        type_proto = type_proto.optional_type.elem_type
    if type_proto.HasField("sequence_type") and type_proto.sequence_type.elem_type.HasField("tensor_type"):
        shapes = importer.shape_dict.get(name)
        if shapes is None:
            raise FrontendError(
                f"graph input {name!r} is a sequence: give the shapes of its elements in "
                f"shape_dict ({{{name!r}: [[2, 3], [4, 3]]}})"
            )
        elem = type_proto.sequence_type.elem_type.tensor_type.elem_type
        dtype = input_dtype(importer, name, elem)
        return relax.TupleStructInfo(
            [relax.TensorStructInfo([input_dim(importer, d, name, i) for i, d in enumerate(s)], dtype)
             for s in shapes]
        )
    if not type_proto.HasField("tensor_type"):
        kind = type_proto.WhichOneof("value")
        raise FrontendError(
            f"graph input {name!r} is a {kind}; graphc imports tensor, sequence and optional inputs only"
        )
    tensor_type = type_proto.tensor_type
    dtype = input_dtype(importer, name, tensor_type.elem_type)
    if name in importer.shape_dict:
        dims = [input_dim(importer, d, name, i) for i, d in enumerate(importer.shape_dict[name])]
        return relax.TensorStructInfo(dims, dtype)
    if not tensor_type.HasField("shape"):
        raise FrontendError(f"graph input {name!r} has no shape; give it in shape_dict")
    dims = []
    for i, d in enumerate(tensor_type.shape.dim):
        if d.HasField("dim_value"):
            dims.append(input_dim(importer, int(d.dim_value), name, i))
        elif d.HasField("dim_param"):
            dims.append(input_dim(importer, d.dim_param, name, i))
        else:
            dims.append(input_dim(importer, None, name, i))
    return relax.TensorStructInfo(dims, dtype)


def input_dtype(importer, name: str, elem_type: int) -> str:
    """The dtype of graph input `name`: `dtype_dict`'s (one for all, or per name), else the model's."""
    given = importer.dtype_dict
    if isinstance(given, dict) and name in given:
        return str(given[name])
    if isinstance(given, str):
        return given
    if elem_type == onnx.TensorProto.UNDEFINED:
        raise FrontendError(f"graph input {name!r} has no element type; give it in dtype_dict")
    return graphc_dtype(elem_type, f"graph input {name!r}")


def input_dim(importer, d, name: str, axis: int):
    """Dimension `axis` of input `name`: a constant, the size variable of a `dim_param`
    (shared by every input naming it), or a new size variable for an unknown one."""
    from .importer import sanitize

    if isinstance(d, int | np.integer) and int(d) >= 0:
        return tir.IntImm("int64", int(d))
    if isinstance(d, str) and d and d != "?":
        key = sanitize(d)
    else:
        key = f"{sanitize(name)}_dim{axis}"
    if key not in importer.dims:
        importer.dims[key] = importer.size_var(key)
    return importer.dims[key]
