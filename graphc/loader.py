"""Models into Relax: `model_to_module` recognises any model `graphc.compile` takes by its type;
`graphc.driver.load(path, shape_dict=...)`, tvmc's `load`, reads model files.

A model file is one of:

- `model.onnx`: imported by the ONNX frontend (`graphc.frontend.onnx`), `shape_dict` giving
  the shapes of inputs the file leaves open (`{"data": [1, 3, 224, 224]}`);
- `model.pt2`: a program saved by `torch.export.save`, imported as exported;
- `module.py:factory`: a Python file and a function in it that takes no arguments and
  returns the model, `(model, example_inputs)` or `(model, example_inputs, dynamic_shapes)`,
  where the model is anything `graphc.compile` takes (a `torch.nn.Module` needs example
  inputs: from the factory, or made from `shape_dict`, named after `forward`'s parameters).

>>> import pathlib, tempfile
>>> source = '''
... import torch
... def make():
...     return torch.nn.Sequential(torch.nn.Linear(8, 2)), (torch.randn(1, 8),)
... '''
>>> path = pathlib.Path(tempfile.mkdtemp()) / "tiny.py"
>>> _ = path.write_text(source)
>>> mod = load(f"{path}:make", shape_dict={"input": [3, 8]})
>>> mod["main"].params[0].struct_info
R.Tensor((3, 8), dtype="float32")
"""

from __future__ import annotations

import importlib.util
import inspect
import logging
import os
import sys
from pathlib import Path

from .errors import GraphcError
from .ir.module import IRModule


class ModelFileError(GraphcError, ValueError):
    """A model file that cannot be read: missing, of an unknown kind, or not what it claims to be."""


def load(path, shape_dict: dict | None = None, dtype_dict: dict | None = None) -> IRModule:
    """The Relax module of the model file `path` (`.onnx`, `.pt2` or "module.py:factory").

    `shape_dict` maps input names to shapes (lists of ints) and `dtype_dict` input names to
    dtypes, for the inputs a file leaves open (ONNX) or a factory gives no example for.
    """
    text = os.fspath(path)
    kind = model_kind(text)
    if kind == "factory":
        file, _, func = text.rpartition(":")
        return _load_factory(Path(file), func, shape_dict, dtype_dict)
    file = Path(text)
    if not file.is_file():
        raise ModelFileError(f"no model file {text!r}" + ("" if file.exists() else " (it does not exist)"))
    if kind == "onnx":
        return import_onnx(file, shape_dict, dtype_dict)
    if shape_dict or dtype_dict:
        raise ModelFileError(f"{text}: a .pt2 program keeps the shapes it was exported with; shape_dict and "
                             "dtype_dict apply to .onnx files and module.py:factory models")
    return _load_pt2(file)


def model_kind(path: str) -> str:
    """"onnx", "pt2" or "factory" for a model path; a ModelFileError naming the kinds otherwise."""
    file, sep, func = path.rpartition(":")
    if sep and file.endswith(".py") and func.isidentifier():
        return "factory"
    suffix = Path(path).suffix.lower()
    if suffix in (".onnx", ".pt2"):
        return suffix[1:]
    raise ModelFileError(f"{path!r} is not a model graphc reads: give a .onnx file, a .pt2 file "
                         "(torch.export.save) or module.py:factory (a function returning the model)")


def import_onnx(model, shape_dict: dict | None = None, dtype_dict: dict | None = None) -> IRModule:
    """An ONNX model (a path, a ModelProto or its bytes) through the ONNX frontend."""
    try:
        from .frontend import onnx as onnx_frontend
    except ImportError as err:
        raise ModelFileError("this graphc has no ONNX frontend (graphc.frontend.onnx) to import ONNX "
                             f"models with: {err}") from err
    options = {"shape_dict": shape_dict, **({"dtype_dict": dtype_dict} if dtype_dict else {})}
    if isinstance(model, str | os.PathLike):
        return onnx_frontend.load(model, **options)
    if isinstance(model, bytes | bytearray):
        import onnx

        model = onnx.load_from_string(bytes(model))
    return onnx_frontend.from_onnx(model, **options)


def _load_pt2(file: Path) -> IRModule:
    import torch

    from .frontend.torch import from_exported_program

    logger = logging.getLogger("torch.export")  # it logs its own traceback before raising
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        exported = torch.export.load(str(file))
    except Exception as err:  # torch raises many kinds for a file that is not a saved program
        raise ModelFileError(f"{file}: not a program saved by torch.export.save ({type(err).__name__}: "
                             f"{err})") from err
    finally:
        logger.setLevel(level)
    return from_exported_program(exported)


def _load_factory(file: Path, func_name: str, shape_dict, dtype_dict) -> IRModule:
    if not file.is_file():
        raise ModelFileError(f"no Python file {str(file)!r} for the model factory {func_name!r}")
    module = _import_file(file)
    factory = getattr(module, func_name, None)
    if not callable(factory):
        raise ModelFileError(f"{file} defines no function {func_name!r}; module.py:factory names a function "
                             "that returns the model, or (model, example_inputs[, dynamic_shapes])")
    model, example_inputs, dynamic_shapes = _unpack(factory())
    if isinstance(model, str | os.PathLike):
        return load(model, shape_dict, dtype_dict)
    if isinstance(model, bytes | bytearray) or _is_onnx(model):
        return import_onnx(model, shape_dict, dtype_dict)
    if shape_dict or dtype_dict:
        torch = sys.modules.get("torch")
        if torch is None or not isinstance(model, torch.nn.Module):
            raise ModelFileError(f"{file}:{func_name} returned a {type(model).__name__}, whose input shapes "
                                 "are fixed; shape_dict and dtype_dict are for torch modules and ONNX models")
        example_inputs = _inputs_from_shapes(torch, model, example_inputs, shape_dict or {}, dtype_dict or {})
        dynamic_shapes = None  # the given shapes are the ones to compile for
    return model_to_module(model, example_inputs, dynamic_shapes)


def model_to_module(model, example_inputs=None, dynamic_shapes=None, shape_dict=None,
                     dtype_dict=None) -> IRModule:
    """The Relax module of a model `compile` accepts, recognised by its type (never by the name
    of its class's module, so every `nn.Module` subclass is a torch model)."""
    onnx = sys.modules.get("onnx")
    is_onnx = isinstance(model, bytes | bytearray) or (onnx is not None
                                                       and isinstance(model, onnx.ModelProto))
    if (shape_dict or dtype_dict) and not (is_onnx or isinstance(model, str | os.PathLike)):
        raise TypeError("shape_dict and dtype_dict apply to ONNX models and model files; a "
                        f"{type(model).__name__} has its shapes (torch modules: example_inputs)")
    if isinstance(model, IRModule):
        _no_export_options("an IRModule already has its shapes", example_inputs, dynamic_shapes)
        return model
    if isinstance(model, str | os.PathLike):
        _no_export_options("a model file says its own inputs; use load(path, shape_dict=...)",
                           example_inputs, dynamic_shapes)
        return load(model, shape_dict, dtype_dict)
    torch = sys.modules.get("torch")  # a torch model exists only once torch is imported
    if torch is not None:
        if isinstance(model, torch.export.ExportedProgram):
            _no_export_options("an ExportedProgram is already exported", example_inputs, dynamic_shapes)
            from .frontend.torch import from_exported_program

            return from_exported_program(model)
        if isinstance(model, torch.nn.Module):
            return _import_torch_module(torch, model, example_inputs, dynamic_shapes)
    if is_onnx:
        # ONNX: a ModelProto or its bytes (a path ending in .onnx goes through `load`)
        _no_export_options("an ONNX model says its own inputs", example_inputs, dynamic_shapes)
        return import_onnx(model, shape_dict, dtype_dict)
    raise TypeError(f"graphc.compile expects a Relax IRModule, a torch ExportedProgram or a torch.nn.Module "
                    f"(with example_inputs), an ONNX ModelProto, or the path of a model file (.onnx, .pt2, "
                    f"module.py:factory); got {type(model).__name__}")


def _no_export_options(why: str, example_inputs, dynamic_shapes) -> None:
    if example_inputs is not None or dynamic_shapes is not None:
        raise TypeError(f"graphc.compile: example_inputs and dynamic_shapes are for torch modules; {why}")


def _import_torch_module(torch, model, example_inputs, dynamic_shapes) -> IRModule:
    from .frontend.torch import from_exported_program

    if example_inputs is None:
        raise TypeError("graphc.compile of a torch.nn.Module needs example_inputs (a tensor, a tuple of "
                        "tensors or a dict of keyword inputs) to export it with torch.export")
    if isinstance(example_inputs, dict):
        args, kwargs = (), dict(example_inputs)
    else:
        args = tuple(example_inputs) if isinstance(example_inputs, list | tuple) else (example_inputs,)
        kwargs = None
    with torch.no_grad():
        exported = torch.export.export(model.eval(), args, kwargs=kwargs, dynamic_shapes=dynamic_shapes)
    return from_exported_program(exported)


def _unpack(made) -> tuple:
    """(model, example_inputs, dynamic_shapes) from what a factory returned."""
    if isinstance(made, tuple) and len(made) in (2, 3) and not _is_tensor(made[0]):
        return (*made, None) if len(made) == 2 else made
    return made, None, None


def _import_file(file: Path):
    name = f"graphc_model_{abs(hash(str(file.resolve())))}"
    spec = importlib.util.spec_from_file_location(name, file)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pickling look the module up by name
    sys.path.insert(0, str(file.parent))  # the file may import its neighbours
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(file.parent))
    return module


def _is_tensor(value) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(value, torch.Tensor)


def _is_onnx(value) -> bool:
    onnx = sys.modules.get("onnx")
    return onnx is not None and isinstance(value, onnx.ModelProto)


def _inputs_from_shapes(torch, model, example_inputs, shape_dict: dict, dtype_dict: dict) -> tuple:
    """Example inputs for a torch module with the shapes of `shape_dict`: random floats, zero
    integers, in `dtype_dict`'s dtype, else the factory's example's, else float32."""
    names = [name for name, p in inspect.signature(model.forward).parameters.items()
             if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    unknown = sorted(set(shape_dict) - set(names))
    if unknown:
        raise ModelFileError(f"the model has no input named {', '.join(map(repr, unknown))}; its inputs are "
                             f"{', '.join(names)}")
    given = list(example_inputs) if isinstance(example_inputs, list | tuple) else \
        [] if example_inputs is None else [example_inputs]
    inputs = []
    for i, name in enumerate(names):
        example = given[i] if i < len(given) else None
        if name not in shape_dict:
            if example is None:
                break  # the remaining parameters keep their defaults
            inputs.append(example)
            continue
        dtype = dtype_dict.get(name) or (example.dtype if _is_tensor(example) else torch.float32)
        dtype = getattr(torch, dtype) if isinstance(dtype, str) else dtype
        shape = [int(d) for d in shape_dict[name]]
        made = torch.randn(shape).to(dtype) if dtype.is_floating_point else torch.zeros(shape, dtype=dtype)
        inputs.append(made)
    missing = [n for n in shape_dict if n not in names[:len(inputs)]]
    if missing:
        raise ModelFileError(f"input {missing[0]!r} comes after an input with neither a shape nor an example")
    return tuple(inputs)


__all__ = ["ModelFileError", "import_onnx", "load", "model_kind", "model_to_module"]
