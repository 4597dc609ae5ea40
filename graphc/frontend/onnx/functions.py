"""ONNX function bodies: an operator graphc has no converter for but that has a function body
(a model-local function, or the schema's own function definition, context-dependent ones
included) is converted by converting the nodes of that body, renamed into a scope of their own
and with the body's attribute references replaced by the calling node's attributes.
"""

from __future__ import annotations

import onnx

from ... import relax, tir
from .registry import normalize_domain


def schema_function(importer, proto, schema, opsets):
    """The schema's function body of an operator graphc has no converter for, or None."""
    version = opsets.get(normalize_domain(proto.domain), 1)
    if schema.has_function:
        body = schema.get_function_with_opset_version(version) or schema.function_body
        if isinstance(body, bytes):
            body = onnx.FunctionProto.FromString(body)
        return body
    if schema.has_context_dependent_function:
        types = [_type_proto(importer, name).SerializeToString() if name else b"" for name in proto.input]
        try:
            data = schema.get_context_dependent_function_with_opset_version(
                version, proto.SerializeToString(), types
            )
        except Exception:  # noqa: BLE001 - onnx raises plain errors for unsupported contexts
            data = None
        if data:
            body = onnx.FunctionProto()
            body.ParseFromString(data)
            return body
    return None


def _type_proto(importer, name: str) -> onnx.TypeProto:
    """The ONNX type of a value (for context-dependent function bodies)."""
    from .dtypes import onnx_elem_type
    from .importer import Known

    value = importer.lookup_value(name)
    sinfo = importer.materialize(value).struct_info if isinstance(value, Known) else value.struct_info
    shape = None
    if isinstance(sinfo, relax.TensorStructInfo) and sinfo.shape_values is not None:
        shape = [int(d.value) if isinstance(d, tir.IntImm) else str(d) for d in sinfo.shape_values]
    return onnx.helper.make_tensor_type_proto(onnx_elem_type(sinfo.dtype), shape)


def expand_function(importer, proto, function, schema=None) -> None:
    """Convert `proto` by converting the nodes of its function body in a scope of their own."""
    from .importer import sanitize

    node_attrs = {a.name: a for a in proto.attribute}
    defaults = {a.name: a for a in function.attribute_proto}
    if schema is not None:  # the schema's defaults for attributes the body refers to
        for name, attr in schema.attributes.items():
            if name not in defaults and attr.default_value is not None and attr.default_value.name:
                defaults[name] = attr.default_value
    renamed = {}
    prefix = f"{sanitize(proto.name or proto.op_type)}__{next(importer._counter)}__"
    for formal, actual in zip(function.input, proto.input):
        renamed[formal] = actual
    for formal in list(function.input)[len(proto.input) :]:
        renamed[formal] = ""
    for formal, actual in zip(function.output, proto.output):
        renamed[formal] = actual

    def rename(n: str) -> str:
        return renamed.get(n, prefix + n) if n else ""

    nodes = [_instantiate(node, rename, node_attrs, defaults, prefix) for node in function.node]
    opsets = dict(importer.opsets)
    opsets.update({normalize_domain(o.domain): o.version for o in function.opset_import})
    importer.convert_nodes(nodes, opsets)


def _instantiate(node, rename, node_attrs: dict, defaults: dict, prefix: str):
    """A copy of a function body's node with its values renamed (subgraphs included) and its
    attribute references replaced by the calling node's attributes."""
    new = onnx.NodeProto()
    new.CopyFrom(node)
    del new.input[:]
    del new.output[:]
    new.input.extend(rename(n) for n in node.input)
    new.output.extend(rename(n) for n in node.output)
    attrs = []
    for a in node.attribute:
        if a.ref_attr_name:
            source = node_attrs.get(a.ref_attr_name) or defaults.get(a.ref_attr_name)
            if source is None:
                continue
            a2 = onnx.AttributeProto()
            a2.CopyFrom(source)
            a2.name = a.name
            attrs.append(a2)
        elif a.type == onnx.AttributeProto.GRAPH:
            a2 = onnx.AttributeProto()
            a2.CopyFrom(a)
            _rename_graph(a2.g, rename, node_attrs, defaults, prefix)
            attrs.append(a2)
        else:
            attrs.append(a)
    del new.attribute[:]
    new.attribute.extend(attrs)
    if not new.name:
        new.name = f"{prefix}{node.op_type}"
    return new


def _rename_graph(graph, rename, node_attrs, defaults, prefix) -> None:
    nodes = [_instantiate(n, rename, node_attrs, defaults, prefix) for n in graph.node]
    del graph.node[:]
    graph.node.extend(nodes)
    for value in list(graph.input) + list(graph.output):
        value.name = rename(value.name)
