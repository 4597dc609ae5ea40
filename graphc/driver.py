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

from . import dlight
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


def _input_module(inp, args=None, name: str = _DEFAULT_NAME) -> IRModule:
    """The unlowered IRModule `lower`/`build` were given (a TE schedule made into PrimFuncs)."""
    if _is_te_schedule(inp):
        if args is None:
            raise TypeError("lowering a TE schedule needs its argument tensors: graphc.lower(s, [A, B, C])")
        from .te import te_schedule_to_module

        mod = te_schedule_to_module(inp, list(args), name=name)
    else:
        if args is not None and not _is_ir(inp) and not isinstance(inp, list | tuple):
            inp = list(args)
        mod = _to_module(inp, args, name if name != _DEFAULT_NAME else None)
    return mod


def lower(inp, args=None, name: str = _DEFAULT_NAME, binds=None, simple_mode: bool = False) -> IRModule:
    """Run the TensorIR lowering pipeline (blocks -> loops, N-D -> flat buffers).

    `inp` is an IRModule, a PrimFunc, a tir.Schedule, a list of te tensors, or a TE schedule
    with its argument tensors in `args` (TVM's `lower(s, [A, B, C])`).
    """
    from .tir.transform.pipeline import lower_pipeline

    return lower_pipeline()(_input_module(inp, args, name))


def _is_te_schedule(inp) -> bool:
    from .te.schedule import Schedule

    return isinstance(inp, Schedule)


def _is_ir(inp) -> bool:
    from .tir.function import PrimFunc

    return isinstance(inp, IRModule | PrimFunc)


def build(inp, args=None, target=None, name: str = _DEFAULT_NAME, target_host=None):
    """Compile `inp` (IRModule, PrimFunc, Schedule or te tensors) for `target` (default "llvm").

    Both TVM spellings work: `build(mod, target="llvm")`, `build(mod, "llvm")` and
    `build(schedule, [A, B], "llvm", name="f")`. Returns a `graphc.runtime.Module`; each
    function is named after its "global_symbol" attribute or its GlobalVar name. The
    target's back end comes from the build table (`graphc.target.register_backend`).
    """
    from .target import Target
    from .target import build as target_build

    if target is None and isinstance(args, str | dict | Target):
        args, target = None, args
    target = Target.resolve(target)
    return target_build(_input_module(inp, args, name), target)


def compile(model, target="llvm", *, example_inputs=None, dynamic_shapes=None, pipeline=None,  # noqa: A001
            params=None, **kwargs):
    """Compile a model into a VM `Executable`: `graphc.compile(model, target="llvm")`.

    `model` is a Relax IRModule, a `torch.export.ExportedProgram`, or a `torch.nn.Module`
    together with `example_inputs` (exported with `torch.export` in eval mode under
    `torch.no_grad()`, `dynamic_shapes` passed through; weights become constants). Then, in
    order: `pipeline` (default: the "zero" pipeline, run when the module still calls high-level
    operators), `InlinePermuteIntoConsumers` (kernels read transposed weights in place instead
    of copying them), the target's default schedules (`dlight`), and `relax.build` (VM
    lowering, kernel compilation, bytecode). `params` binds `main`'s weight parameters as constants.
    The result is cached on disk (`graphc.compile_cache`): compiling the same module for the same
    target again loads it. A long compile draws a progress bar on a terminal.

    >>> import graphc
    >>> graphc.compile(object())
    Traceback (most recent call last):
      ...
    TypeError: graphc.compile expects a Relax IRModule, a torch ExportedProgram or a torch.nn.Module ...
    """
    import time

    from . import compile_cache
    from .progress import CompileProgress
    from .relax.pipeline import get_pipeline
    from .relax.transform import InlinePermuteIntoConsumers
    from .relax.vm_build import build as vm_build
    from .target import Target

    mod = _model_to_module(model, example_inputs, dynamic_shapes)
    target = Target.resolve(target)

    if params:
        from .relax.transform import BindParams

        mod = BindParams("main", params)(mod)  # before the pipeline, so weight transforms fold away
    key = compile_cache.compile_key(mod, target, pipeline, kwargs)
    exe = compile_cache.load(key) if key is not None else None
    if exe is not None:
        return exe
    start = time.perf_counter()
    with CompileProgress():
        if pipeline is not None:
            mod = pipeline(mod)
        elif _has_high_level_calls(mod):
            mod = get_pipeline("zero")(mod)
        mod = InlinePermuteIntoConsumers()(mod)  # no transposed weight copies on every call
        with target:
            mod = dlight.default_schedule(target)(mod)
        exe = vm_build(mod, target, **kwargs)
    if key is not None and time.perf_counter() - start >= compile_cache.MIN_SECONDS:
        compile_cache.store_in_background(key, exe)
    return exe


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
    if where.startswith("onnx"):
        raise TypeError("graphc.compile: ONNX models are not supported yet (the ONNX frontend is a "
                        "separate issue)")
    raise TypeError(f"graphc.compile expects a Relax IRModule, a torch ExportedProgram or a torch.nn.Module "
                    f"(with example_inputs), got {kind.__name__}")


def _has_high_level_calls(mod: IRModule) -> bool:
    """Whether a Relax function still calls an operator that legalization would lower."""
    from .relax import expr as relax_expr
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
        if isinstance(func, relax_expr.Function):
            Find().visit_expr(func)
            if found:
                return True
    return False


__all__ = ["build", "compile", "lower"]
