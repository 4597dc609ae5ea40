"""`graphc.lower` and `graphc.build`: tensor programs to lowered IR to loaded machine code.

>>> import graphc, numpy as np
>>> from graphc import tir
>>> A = tir.decl_buffer((4,), "int32", "A")
>>> a, i = tir.Var("a", "handle"), tir.Var("i")
>>> body = tir.For(i, tir.const(0), tir.const(4), tir.ForKind.SERIAL, tir.BufferStore(A, i * i, (i,)))
>>> lib = graphc.build(tir.PrimFunc([a], body, buffer_map={a: A}), target="llvm", name="squares")
>>> x = np.zeros(4, "int32"); lib["squares"](x); x
array([0, 1, 4, 9], dtype=int32)
"""

from __future__ import annotations

from .errors import TargetError
from .ir.module import IRModule

_DEFAULT_NAME = "main"


def _to_module(inp, args=None, name: str | None = None) -> IRModule:
    from .tir.function import PrimFunc

    if isinstance(inp, IRModule):
        return inp
    if isinstance(inp, PrimFunc):
        if name is not None or "global_symbol" not in inp.attrs:
            inp = inp.with_attr("global_symbol", name or _DEFAULT_NAME)
        return IRModule({inp.attrs["global_symbol"]: inp})
    if isinstance(inp, list | tuple):
        from . import te

        func = te.create_prim_func(list(inp))
        return _to_module(func, None, name)
    if hasattr(inp, "mod") and isinstance(inp.mod, IRModule):  # a tir.Schedule
        return inp.mod
    raise TypeError(
        f"graphc.lower/build take an IRModule, a PrimFunc, a tir.Schedule or a list of te tensors, "
        f"got {type(inp).__name__}"
    )


def lower(inp, args=None, name: str = _DEFAULT_NAME, binds=None, simple_mode: bool = False) -> IRModule:
    """Run the TensorIR lowering pipeline (blocks -> loops, N-D -> flat buffers).

    `inp` is an IRModule, a PrimFunc, a tir.Schedule, a list of te tensors, or a TE schedule
    with its argument tensors in `args` (TVM's `lower(s, [A, B, C])`).
    """
    from .tir.transform.pipeline import lower_pipeline

    if _is_te_schedule(inp):
        if args is None:
            raise TypeError("lowering a TE schedule needs its argument tensors: graphc.lower(s, [A, B, C])")
        from .te import te_schedule_to_module

        mod = te_schedule_to_module(inp, list(args), name=name)
    else:
        if args is not None and not _is_ir(inp) and not isinstance(inp, list | tuple):
            inp = list(args)
        mod = _to_module(inp, args, name if name != _DEFAULT_NAME else None)
    return lower_pipeline()(mod)


def _is_te_schedule(inp) -> bool:
    from .te import schedule as te_schedule

    schedule_cls = getattr(te_schedule, "Schedule", None)
    return schedule_cls is not None and isinstance(inp, schedule_cls)


def _is_ir(inp) -> bool:
    from .tir.function import PrimFunc

    return isinstance(inp, IRModule | PrimFunc)


def _resolve_target(target):
    from .target import Target

    if target is None:
        return Target.current() or Target("llvm")
    return target if isinstance(target, Target) else Target(target)


def build(inp, args=None, target=None, name: str = _DEFAULT_NAME, target_host=None):
    """Compile `inp` (IRModule, PrimFunc, Schedule or te tensors) for `target` (default "llvm").

    Both TVM spellings work: `build(mod, target="llvm")`, `build(mod, "llvm")` and
    `build(schedule, [A, B], "llvm", name="f")`. Returns a `graphc.runtime.Module`; each
    function is named after its "global_symbol" attribute or its GlobalVar name.
    """
    if target is None and _looks_like_target(args):
        args, target = None, args
    target = _resolve_target(target)
    if target.kind in ("cuda", "nvptx"):
        raise TargetError(
            f"CUDA code generation is not available yet; target {str(target)!r} cannot be built. "
            "Build for target='llvm' to run on the CPU."
        )
    if target.kind == "opencl":
        raise TargetError(f"OpenCL code generation is not available yet; target {str(target)!r} "
                          "cannot be built. Build for target='llvm' to run on the CPU.")
    if target.kind != "llvm":
        raise TargetError(f"graphc.build supports target kind 'llvm' for now, got {target.kind!r}")
    mod = lower(inp, args, name)
    from .target.llvm import build_llvm

    return build_llvm(mod, target)


def _looks_like_target(value) -> bool:
    from .target import Target

    return isinstance(value, str | dict | Target)


def compile(model, target="llvm", *, example_inputs=None, dynamic_shapes=None, pipeline=None,  # noqa: A001
            params=None, shape_dict=None, dtype_dict=None, **kwargs):
    """Compile a model into a VM `Executable`: `graphc.compile(model, target="llvm")`.

    `model` is a Relax IRModule, a `torch.export.ExportedProgram`, or a `torch.nn.Module`
    together with `example_inputs` (exported with `torch.export` in eval mode under
    `torch.no_grad()`, `dynamic_shapes` passed through; weights become constants), or an ONNX
    model (an `onnx.ModelProto`, its bytes, or a path ending in `.onnx`; `shape_dict` and
    `dtype_dict` passed to `graphc.frontend.onnx.from_onnx`). Then, in
    order: `pipeline` (default: the "zero" pipeline, run when the module still calls high-level
    operators), `InlinePermuteIntoConsumers` (kernels read transposed weights in place instead
    of copying them), the target's default schedules (`dlight`), and `relax.build` (VM
    lowering, kernel compilation, bytecode). `params` binds `main`'s weight parameters as constants.

    >>> import graphc
    >>> graphc.compile(object())
    Traceback (most recent call last):
      ...
    TypeError: graphc.compile expects a Relax IRModule, a torch ExportedProgram or a torch.nn.Module ...
    """
    if shape_dict is not None or dtype_dict is not None:
        mod = _onnx_to_module(model, shape_dict, dtype_dict)
    else:
        mod = _model_to_module(model, example_inputs, dynamic_shapes)
    target = _resolve_target(target)
    from .relax.vm_build import build as vm_build

    if params:
        from .relax.transform import BindParams

        mod = BindParams("main", params)(mod)  # before the pipeline, so weight transforms fold away
    if pipeline is not None:
        mod = pipeline(mod)
    elif _has_high_level_calls(mod):
        mod = _zero_pipeline()(mod)
    from .relax.transform import InlinePermuteIntoConsumers

    mod = InlinePermuteIntoConsumers()(mod)  # no transposed weight copies on every call
    with target:
        mod = _default_schedule(target)(mod)
    return vm_build(mod, target, **kwargs)


def _model_to_module(model, example_inputs=None, dynamic_shapes=None) -> IRModule:
    """The Relax module of a model compile accepts (IRModule, ExportedProgram, nn.Module)."""
    if isinstance(model, IRModule):
        if example_inputs is not None or dynamic_shapes is not None:
            raise TypeError("graphc.compile: example_inputs and dynamic_shapes are for torch modules; "
                            "an IRModule already has its shapes")
        return model
    kind = type(model)
    where = f"{kind.__module__}.{kind.__qualname__}"
    if where.startswith("torch"):
        import torch

        from .frontend.torch import from_exported_program

        if isinstance(model, torch.export.ExportedProgram):
            return from_exported_program(model)
        if isinstance(model, torch.nn.Module):
            if example_inputs is None:
                raise TypeError("graphc.compile of a torch.nn.Module needs example_inputs (a tuple of "
                                "tensors) to export it with torch.export")
            inputs = tuple(example_inputs) if isinstance(example_inputs, list | tuple) else (example_inputs,)
            with torch.no_grad():
                exported = torch.export.export(model.eval(), inputs, dynamic_shapes=dynamic_shapes)
            return from_exported_program(exported)
    if _is_onnx(model):
        return _onnx_to_module(model)
    raise TypeError(f"graphc.compile expects a Relax IRModule, a torch ExportedProgram or a torch.nn.Module "
                    f"(with example_inputs), got {kind.__name__}")


def _is_onnx(model) -> bool:
    """An ONNX ModelProto, the bytes of one, or a path ending in `.onnx` (by type, not module)."""
    import os

    import onnx

    if isinstance(model, onnx.ModelProto | bytes | bytearray):
        return True
    return isinstance(model, str | os.PathLike) and str(model).lower().endswith(".onnx")


def _onnx_to_module(model, shape_dict=None, dtype_dict=None) -> IRModule:
    if not _is_onnx(model):
        raise TypeError("graphc.compile: shape_dict and dtype_dict are for ONNX models")
    from .frontend.onnx import from_onnx

    return from_onnx(model, shape_dict=shape_dict, dtype_dict=dtype_dict)


def _has_high_level_calls(mod: IRModule) -> bool:
    """Whether a Relax function still calls an operator that legalization would lower."""
    from .relax import expr as E
    from .relax.expr_functor import ExprVisitor
    from .relax.op.registry import Op

    found = []

    class Find(ExprVisitor):
        def visit_Call(self, call):  # noqa: N802 - the visitor's naming
            op = call.op
            if isinstance(op, Op) and op.get_attr("FLegalize") is not None:
                found.append(op)
            super().visit_Call(call)

    for _, func in mod.items():
        if isinstance(func, E.Function):
            Find().visit_expr(func)
            if found:
                return True
    return False


def _zero_pipeline():
    from .relax import pipeline, transform

    try:
        return pipeline.get_pipeline("zero")
    except NotImplementedError:  # the pipeline module is not there yet: legalize at least
        return transform.LegalizeOps()


def _default_schedule(target):
    from . import dlight

    if target.kind == "llvm":
        return dlight.ApplyDefaultSchedule(dlight.cpu.Reduction(), dlight.cpu.Fallback())
    rules = [getattr(dlight.gpu, name)() for name in ("Matmul", "Fallback") if hasattr(dlight.gpu, name)]
    return dlight.ApplyDefaultSchedule(*rules)


__all__ = ["build", "compile", "lower"]
