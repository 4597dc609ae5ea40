"""Helpers for the ONNX frontend tests: build small models, run them through graphc (import,
`graphc.compile`, the VM) and compare with ONNX's reference implementation."""

import numpy as np
import onnx
from onnx import TensorProto, helper

import graphc
from graphc import relax
from graphc.frontend.onnx import from_onnx


def tensor_info(name, dtype, shape):
    elem = dtype if isinstance(dtype, int) else helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    return helper.make_tensor_value_info(name, elem, shape)


def make_model(nodes, inputs, outputs, opset=18, initializers=(), domains=()):
    """A model of `nodes`; inputs/outputs are (name, dtype, shape) triples (dtype None: float32)."""
    graph = helper.make_graph(
        list(nodes),
        "test",
        [tensor_info(n, d or TensorProto.FLOAT, s) for n, d, s in inputs],
        [tensor_info(n, d, s) if d is not None else onnx.ValueInfoProto(name=n) for n, d, s in outputs],
        initializer=list(initializers),
    )
    opsets = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, v) for d, v in domains]
    model = helper.make_model(graph, opset_imports=opsets)
    model.ir_version = min(model.ir_version, 10)
    return with_output_types(model)


def with_output_types(model):
    """Untyped graph outputs typed by ONNX's shape inference (float32 of unknown rank if it cannot)."""
    inferred = onnx.shape_inference.infer_shapes(model)
    types = {v.name: v.type for v in list(inferred.graph.value_info) + list(inferred.graph.output)}
    for out in model.graph.output:
        if not out.HasField("type"):
            found = types.get(out.name)
            if found is not None and found.WhichOneof("value") is not None:
                out.type.CopyFrom(found)
                if found.HasField("tensor_type") and not found.tensor_type.HasField("shape"):
                    out.type.tensor_type.shape.SetInParent()  # the checker wants one; graphc ignores it
            else:
                out.type.tensor_type.elem_type = TensorProto.FLOAT
                out.type.tensor_type.shape.SetInParent()
    return model


def run_graphc(model, inputs, **import_kwargs):
    mod = from_onnx(model, **import_kwargs)
    assert relax.analysis.well_formed(mod)
    vm = relax.VirtualMachine(graphc.compile(mod, "llvm"), graphc.cpu())
    out = vm["main"](*inputs)
    outs = list(out) if isinstance(out, tuple | list) else [out]
    return [o.numpy() for o in outs]


def run_reference(model, inputs):
    from onnx.reference import ReferenceEvaluator

    names = [i.name for i in model.graph.input if i.name not in {t.name for t in model.graph.initializer}]
    return ReferenceEvaluator(model).run(None, dict(zip(names, inputs)))


def run_ort(model, inputs):
    import onnxruntime as ort

    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, dict(zip([i.name for i in session.get_inputs()], inputs)))


def check_model(model, inputs, rtol=1e-5, atol=1e-5, expected=None, reference="onnx", **import_kwargs):
    """Import and run `model` on `inputs`, compare every output with the reference's
    (`reference`: "onnx" for onnx.reference, "ort" for ONNX Runtime)."""
    got = run_graphc(model, inputs, **import_kwargs)
    if expected is None:
        expected = run_reference(model, inputs) if reference == "onnx" else run_ort(model, inputs)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        e = np.asarray(e)
        assert g.shape == e.shape, (g.shape, e.shape)
        assert g.dtype == e.dtype, (g.dtype, e.dtype)
        if e.dtype.kind in "fc":
            np.testing.assert_allclose(g, e, rtol=rtol, atol=atol)
        else:
            np.testing.assert_array_equal(g, e)
    return got


def check_node(op_type, inputs, attrs=None, opset=18, num_outputs=1, const_inputs=(), domain="", **kw):
    """One node `op_type` on `inputs` (numpy arrays; None for an omitted optional input).

    Inputs whose index is in `const_inputs` become initializers (folded at import); the
    others are graph inputs, so the same check covers both forms of a tensor operand."""
    names = [f"in{i}" if a is not None else "" for i, a in enumerate(inputs)]
    outs = [f"out{i}" for i in range(num_outputs)]
    node = helper.make_node(op_type, names, outs, domain=domain or None, **(attrs or {}))
    graph_inputs, inits, feeds = [], [], []
    for i, (name, a) in enumerate(zip(names, inputs)):
        if a is None:
            continue
        if i in const_inputs:
            inits.append(onnx.numpy_helper.from_array(np.asarray(a), name))
        else:
            graph_inputs.append((name, np.asarray(a).dtype, list(np.asarray(a).shape)))
            feeds.append(np.asarray(a))
    domains = [(domain, 1)] if domain else []
    model = make_model(
        [node],
        graph_inputs,
        [(o, None, None) for o in outs],
        opset=opset,
        initializers=inits,
        domains=domains,
    )
    return check_model(model, feeds, **kw)


def rand(*shape, dtype="float32", seed=0, low=-1.0, high=1.0):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind in "iu":
        return rng.integers(int(low), int(high) + 1, size=shape).astype(dtype)
    if np.dtype(dtype) == np.bool_:
        return rng.random(shape) > 0.5
    return rng.uniform(low, high, size=shape).astype(dtype)
