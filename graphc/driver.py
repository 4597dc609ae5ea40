"""The entry points: `graphc.lower` and `graphc.build` (tensor programs to lowered IR to loaded
machine code), `graphc.compile` and `compile_to` (models to VM executables, or to one stage), and
tvmc's trio `load` (model files, loader.py), `compile`, `run` (runner.py).

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

import os
import signal
import sys
import time

from . import dlight
from .compile_gc import fewer_collections
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


STAGES = ("imported", "legalized", "fused", "scheduled", "lowered", "bytecode")


def compile(model, target="llvm", *, example_inputs=None, dynamic_shapes=None, pipeline=None,  # noqa: A001
            params=None, lift_transform_params=False, tuning_records=None, progress=None,
            shape_dict=None, dtype_dict=None):
    """Compile a model into a VM `Executable`: `graphc.compile(model, target="llvm")`.

    `model` is recognised by its type:

    - a Relax `IRModule` with a "main" function;
    - a `torch.export.ExportedProgram`, or a `torch.nn.Module` (any subclass: yours,
      `transformers`', ...) with `example_inputs` (a tensor, a tuple of them, or a dict of
      keyword inputs), exported with `torch.export` in eval mode under `torch.no_grad()`,
      `dynamic_shapes` passed through; weights become constants;
    - an ONNX model: an `onnx.ModelProto` or its serialized bytes;
    - a path: a `.onnx` file, a `.pt2` file (`torch.export.save`) or "module.py:factory"
      (see `graphc.driver.load`).

    `shape_dict`/`dtype_dict` (`{input: shape}` / `{input: dtype}`) set the input shapes and
    dtypes an ONNX model or a model file leaves open (`graphc.frontend.onnx.from_onnx`'s).

    Then, in the current PassContext (its `opt_level`, `disabled_pass` and config are
    honoured): `pipeline` (default: the "zero" pipeline, run when the module still calls
    high-level operators), `InlinePermuteIntoConsumers` (kernels read transposed weights in
    place instead of copying them), the target's default schedules (`dlight`), the VM lowering
    and TensorIR lowering pipelines, LLVM, and the bytecode. `params` binds `main`'s weight
    parameters as constants (weights the kernels want in another layout are then repacked once,
    at compile time). With weights kept as inputs, `lift_transform_params=True` moves that
    repacking (and anything else computed from the weights alone) into
    `main_transform_params`, to run once when they are bound:
    `p = vm["main_transform_params"](*weights)`, then `vm["main"](x, *p)`.
    `tuning_records` (a records file or a `graphc.tune.Database`, written by `graphc.tune`):
    each kernel with a record for this target gets its best tuned schedule, the others the
    default one (docs/tuning.md). `progress(message, done, total)`, if given, hears of each step
    (the `graphc` command line draws it). The result runs as `exe(*inputs)` or in a
    `relax.VirtualMachine(exe, device)`; either returns what the model returns (one tensor,
    a tuple, a dict, ...).

    The executable is cached on disk (`graphc.compile_cache`): compiling the same module for
    the same target again, in any process, loads it. Without `progress`, a long compile draws
    a progress bar on a terminal (`graphc.progress`).

    >>> import graphc
    >>> graphc.compile(object())
    Traceback (most recent call last):
      ...
    TypeError: graphc.compile expects a Relax IRModule, a torch ExportedProgram or a torch.nn.Module ...
    """
    return compile_to(model, "bytecode", target, example_inputs=example_inputs, dynamic_shapes=dynamic_shapes,
                      pipeline=pipeline, params=params, lift_transform_params=lift_transform_params,
                      tuning_records=tuning_records, progress=progress, shape_dict=shape_dict,
                      dtype_dict=dtype_dict)


def compile_to(model, stage: str, target="llvm", *, example_inputs=None, dynamic_shapes=None, pipeline=None,
               params=None, lift_transform_params=False, tuning_records=None, progress=None,
               shape_dict=None, dtype_dict=None):
    """`compile`, stopped after `stage`: the IRModule as it is then, or the Executable ("bytecode").

    The stages (`STAGES`): "imported" (the Relax module of the model), "legalized" (every
    operator a call of a TensorIR function), "fused" (the "zero" pipeline: fused kernels),
    "scheduled" (default schedules applied), "lowered" (VM lowering: explicit memory and
    shape checks; kernels in the lowered form code generators read), "bytecode".
    `graphc show MODEL --stage NAME` prints them.

    >>> from graphc.script import from_source
    >>> mod = from_source('''
    ... @I.ir_module
    ... class Module:
    ...     @R.function
    ...     def main(x: R.Tensor((4,), "float32")):
    ...         return R.add(x, x)
    ... ''')
    >>> [gv.name_hint for gv in compile_to(mod, "legalized").get_global_vars()]
    ['add', 'main']
    """
    if stage not in STAGES:
        raise ValueError(f"unknown stage {stage!r}; the stages are {', '.join(STAGES)}")
    from . import compile_cache
    from .progress import CompileProgress
    from .target import Target

    key, start = None, time.perf_counter()
    with fewer_collections(), CompileProgress(enabled=progress is None) as bar:
        stages = iter_stages(model, target, example_inputs=example_inputs, dynamic_shapes=dynamic_shapes,
                             pipeline=pipeline, params=params, lift_transform_params=lift_transform_params,
                             tuning_records=tuning_records, progress=progress or bar, shape_dict=shape_dict,
                             dtype_dict=dtype_dict)
        for name, result in stages:
            if name == "imported" and stage == "bytecode" and tuning_records is None:
                # the compile cache: the same module for the same target compiled before
                options = {"lift_transform_params": True} if lift_transform_params else {}
                key = compile_cache.compile_key(result, Target.resolve(target), pipeline, options)
                exe = compile_cache.load(key) if key is not None else None
                if exe is not None:
                    stages.close()
                    (progress or bar)("loaded from the compile cache", 1, 1)
                    return exe
                start = time.perf_counter()
            if name == stage:
                break
        else:
            raise AssertionError(f"iter_stages ended before stage {stage!r}")  # it yields every stage
    if key is not None and time.perf_counter() - start >= compile_cache.MIN_SECONDS:
        compile_cache.store_in_background(key, result)  # the compile returns while it is written
    return result


def iter_stages(model, target="llvm", *, example_inputs=None, dynamic_shapes=None, pipeline=None,
                params=None, lift_transform_params=False, tuning_records=None, progress=None,
                shape_dict=None, dtype_dict=None):
    """`compile` one stage at a time: yields `(stage, result)` for each of `STAGES` in order, the
    IRModule after that stage (the Executable for "bytecode"). Stop iterating to stop compiling;
    `graphc.report` reads every stage. With a custom `pipeline`, "legalized" is the module before it.

    >>> from graphc.script import from_source
    >>> mod = from_source('''
    ... @I.ir_module
    ... class Module:
    ...     @R.function
    ...     def main(x: R.Tensor((4,), "float32")):
    ...         return R.add(x, x)
    ... ''')
    >>> [stage for stage, _ in iter_stages(mod)] == list(STAGES)
    True
    """
    from .ir.transform import Sequential
    from .relax.pipeline import get_pipeline
    from .relax.transform import (
        CanonicalizeBindings,
        DecomposeOpsForInference,
        FoldConstant,
        InlinePermuteIntoConsumers,
        LegalizeOps,
        LiftTransformParams,
        SplitLayoutRewritePreproc,
        VMLoweringPipeline,
    )
    from .target import Target

    report = progress or _no_progress
    report("importing the model", 0, 0)
    mod = model_to_module(model, example_inputs, dynamic_shapes, shape_dict, dtype_dict)
    target = Target.resolve(target)
    if params:
        from .relax.transform import BindParams

        mod = BindParams("main", params)(mod)  # before the pipeline, so weight transforms fold away
    yield "imported", mod
    if pipeline is not None:
        yield "legalized", mod
        report("running the pass pipeline", 0, 0)
        mod = pipeline(mod)
    elif _has_high_level_calls(mod):
        # inference batch norm as elementwise ops, so that they fuse into the convolution before
        mod = LegalizeOps()(CanonicalizeBindings()(DecomposeOpsForInference()(mod)))
        yield "legalized", mod
        report("legalizing and fusing operators", 0, 0)
        mod = get_pipeline("zero")(mod)  # its LegalizeOps finds nothing left to do
    else:
        yield "legalized", mod
    # kernels read transposed weights in place instead of copying them on every call
    mod = Sequential([InlinePermuteIntoConsumers()], name="graphc.compile.inline")(mod)
    yield "fused", mod
    report(f"scheduling {_count_kernels(mod)} kernels for {target.kind}", 0, 0)
    mod = to_schedule(mod)
    with target:
        schedules = [dlight.default_schedule(target)]
        if tuning_records is not None:  # tuned kernels first; the default rules take the rest
            from .tune.apply import ApplyTuningRecords

            schedules.insert(0, ApplyTuningRecords(tuning_records, target))
        schedule = Sequential(schedules, name="graphc.compile.schedule")
        if tuning_records is None:  # the kernels scheduled on all cores first (where it pays)
            mod, _ = map_kernels(mod, schedule, report, "scheduling kernels")
        mod = schedule(mod)
        mod = FoldConstant()(SplitLayoutRewritePreproc()(mod))  # pack constant weights once, now
        if lift_transform_params:  # weights kept as inputs: packed by main_transform_params
            mod = LiftTransformParams()(mod)
        mod = dlight.default_schedule(target)(mod)  # the packing of weights kept as inputs
    yield "scheduled", mod
    from .relax.vm_build import build as vm_build
    from .target.llvm.build import forget_ir

    try:
        with target:
            mod = _lower_kernels(VMLoweringPipeline()(mod), report, target)
        yield "lowered", mod
        yield "bytecode", vm_build(mod, target, vm_lowering=False, kernels_lowered=True, progress=report)
    finally:
        forget_ir()  # the kernels' IR the lowering children generated (`_lower_kernels`)


def to_schedule(mod: IRModule) -> IRModule:
    """The module as the schedules see it: each kernel told which of its inputs are weights
    (it may ask for them packed). Tuning tasks are these kernels (`graphc.tune.tasks`)."""
    from .relax.transform import AttachAttrLayoutFreeBuffers

    return AttachAttrLayoutFreeBuffers()(mod)


def _no_progress(message: str, done: int, total: int) -> None:
    pass


def _count_kernels(mod: IRModule) -> int:
    from .tir.function import PrimFunc

    return sum(1 for _, func in mod.items() if isinstance(func, PrimFunc))


def _lower_kernels(mod: IRModule, report, target=None) -> IRModule:
    """`mod` with each PrimFunc in the lowered form, one at a time (progress counts them).

    For the CPU, the children lowering kernels (`map_kernels`) also generate each one's LLVM
    IR, as `build_llvm` would, and this process keeps it for the build (`remember_ir`)."""
    from .tir.function import PrimFunc
    from .tir.transform.pipeline import lower_pipeline

    pipeline = lower_pipeline()
    ahead = None
    if target is not None and target.kind == "llvm":
        from .target.llvm.build import kernel_ir, remember_ir

        def make(gv, func):
            return kernel_ir(func.attrs.get("global_symbol", gv.name_hint), func, target)

        def take(gv, func, made):
            remember_ir(func.attrs.get("global_symbol", gv.name_hint), func, *made, target)

        ahead = (make, take)
    # on all cores, where it pays
    out, lowered = map_kernels(mod, pipeline, report, "lowering kernels", ahead)
    kernels = [(gv, func) for gv, func in out.items()
               if isinstance(func, PrimFunc) and gv.name_hint not in lowered]
    if kernels:
        out = out.copy()
    for done, (gv, func) in enumerate(kernels):
        report("lowering kernels", done, len(kernels))
        out[gv] = pipeline(IRModule({gv: func}))[gv]
    report("lowering kernels", len(kernels), len(kernels))
    return out


# -- kernels on all cores ------------------------------------------------------------------------

# A module with fewer kernels than this is scheduled and lowered in this process alone: starting
# a process costs more than it saves.
PARALLEL_MIN_KERNELS = 8


def map_kernels(mod: IRModule, kernel_pass, report, message: str, ahead=None) -> tuple[IRModule, set]:
    """`mod` with `kernel_pass` run over its PrimFuncs on all cores, and the names of the
    kernels it ran on (none when it ran nowhere: the caller then runs it itself).

    The kernels are shared out among this process and `jobs - 1` forked children,
    each running `kernel_pass` on a module of its own kernels, one kernel at a time, and sending
    the results back pickled: the same pass in the same PassContext on the same functions, so
    the result is the same as running it here. Only where it is safe and pays: at least
    `PARALLEL_MIN_KERNELS` kernels with static shapes (a symbolic shape's Var is shared with
    the Relax function, and pickling would copy it), no pass instrument watching (children's
    passes would run unseen), no user lowering passes (their side effects would happen in a
    child), and `GRAPHC_COMPILE_JOBS` (default: one per core) above 1. A kernel whose pass
    warned or raised in a child is redone here, so that the warning or error comes from here.
    (Linux only: forking is what makes it cheap, and elsewhere it is not safe in every process.)

    `ahead`, a pair `(make, take)`: after its share, each process (this one included, while
    the children work) runs `make(gv, result)` on each of its results, and this process hands
    what was made to `take(gv, result, made)` (nothing where `make` warned or raised).
    """
    from .ir.transform import _GLOBAL_INSTRUMENTS, PassContext
    from .progress import CompileProgress
    from .target.llvm.build import parallel_parts
    from .tir.function import PrimFunc

    jobs = parallel_parts()
    ctx = PassContext.current()
    kernels = [(gv, func) for gv, func in mod.items()
               if isinstance(func, PrimFunc) and _static(func)]
    if (jobs < 2 or len(kernels) < PARALLEL_MIN_KERNELS or sys.platform != "linux" or ctx.instruments
            or any(not isinstance(i, CompileProgress) for i in _GLOBAL_INSTRUMENTS)
            or ctx.config.get("tir.add_lower_pass") or not fork_safe()):
        return mod, set()
    groups = _share_out(kernels, jobs)
    children = []
    try:
        for group in groups[1:]:
            children.append(_fork(kernel_pass, group, ahead[0] if ahead else None))
        results = _run_kernels(kernel_pass, groups[0])
        made = _make_ahead(ahead[0], results, groups[0]) if ahead else {}  # while the children work
    except BaseException:  # interrupted: no child is left behind
        for pid, read in children:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            os.close(read)
        raise
    report(message, len(groups[0]), len(kernels))
    for child in children:
        got, child_made = _collect(child)
        results.update(got)
        made.update(child_made)
    out = mod.copy()
    for gv, _ in kernels:
        if results.get(gv.name_hint) is not None:
            out[gv] = results[gv.name_hint]
            if gv.name_hint in made:
                ahead[1](gv, out[gv], made[gv.name_hint])
    report(message, len(kernels), len(kernels))
    return out, {name for name, func in results.items() if func is not None}


# Python threads a fork may leave behind: graphc's own (the compile cache's hash pool and entry
# writers; the modules that own them give a forked child fresh locks and pools with
# `os.register_at_fork`), and tqdm's monitor (started by any progress bar, torch.export's
# included; it touches tqdm's lock only, which a child never takes).
_SAFE_THREAD_PREFIXES = ("graphc-", "tqdm_monitor")


def fork_safe() -> bool:
    """Whether `map_kernels` may fork now: no Python thread alive but this one and those known
    to be harmless (graphc's own, tqdm's monitor).

    A forked child has only the thread that forked it. A lock another Python thread held at
    that moment (in any module a pass uses) stays held in the child forever, so with a
    foreign Python thread alive the kernels are done in this process. Native threads (the
    OpenMP pools of torch, ONNX Runtime or graphc's own kernels, LLVM's) are no obstacle: a
    child runs schedules and TensorIR passes only, which call no kernel, no OpenMP region and
    no torch or ONNX Runtime function, and leaves with `os._exit`.
    """
    import threading

    current = threading.current_thread()
    return all(t is current or t.name.startswith(_SAFE_THREAD_PREFIXES) for t in threading.enumerate())


def _share_out(kernels: list, jobs: int) -> list[list]:
    """`kernels` in at most `jobs` groups of about equal work, the largest kernels placed first (each
    into the group with the least so far), each group in module order. The work of a kernel
    is guessed from its size: the statements of its body, which scheduling and lowering walk
    again and again (a convolution nest weighs more than an elementwise loop)."""
    from .target.llvm.build import _partition
    from .tir.schedule.state import walk

    weights = [sum(1 for _ in walk(func.body)) for _, func in kernels]
    return [[kernels[i] for i in part] for part in _partition(weights, jobs)]


def _static(func) -> bool:
    from .tir.expr import IntImm

    return all(isinstance(d, IntImm) for buf in func.buffer_map.values() for d in (*buf.shape, *buf.strides))


def _run_kernels(kernel_pass, kernels: list) -> dict:
    """name -> `kernel_pass` of the kernel, or None where it warned or raised."""
    import warnings

    results = {}
    for gv, func in kernels:
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                result = kernel_pass(IRModule({gv: func}))
            results[gv.name_hint] = None if caught else result[gv.name_hint]
        except Exception:  # noqa: BLE001 - redone by the caller, where it raises again
            results[gv.name_hint] = None
    return results


def _make_ahead(make, results: dict, kernels: list) -> dict:
    """name -> `make(gv, result)` for each result (none where it warned or raised: the caller
    of `map_kernels` makes it again itself, where the warning or error then comes from)."""
    import warnings

    made = {}
    for gv, _ in kernels:
        result = results.get(gv.name_hint)
        if result is not None:
            try:
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    value = make(gv, result)
            except Exception:  # noqa: BLE001, S112 - made again by the caller, where it raises
                continue
            if not caught:
                made[gv.name_hint] = value
    return made


def _fork(kernel_pass, kernels: list, make=None):
    """A child process running `_run_kernels` (and `make` over its results): (pid, the pipe
    its pickled results come on)."""
    import pickle
    import warnings

    read, write = os.pipe()
    with warnings.catch_warnings():  # Python 3.12+ warns of any thread; `fork_safe` judged them
        warnings.filterwarnings("ignore", message=".*multi-threaded.*fork", category=DeprecationWarning)
        pid = os.fork()
    if pid == 0:  # the child: compute, send, and leave without running any exit handler
        code = 1
        try:
            from .ir.transform import _GLOBAL_INSTRUMENTS

            _GLOBAL_INSTRUMENTS.clear()  # the progress bar is drawn by the parent alone
            os.close(read)
            results = _run_kernels(kernel_pass, kernels)
            made = _make_ahead(make, results, kernels) if make is not None else {}
            data = pickle.dumps((results, made), protocol=pickle.HIGHEST_PROTOCOL)
            with os.fdopen(write, "wb") as stream:
                stream.write(data)
            code = 0
        finally:
            os._exit(code)
    os.close(write)
    return pid, read


def _collect(child) -> tuple[dict, dict]:
    """The results of a child of `_fork` and what it made of them ({} and {} when it failed:
    its kernels are then done here)."""
    import pickle

    pid, read = child
    with os.fdopen(read, "rb") as stream:
        data = stream.read()
    _, status = os.waitpid(pid, 0)
    if status != 0 or not data:
        return {}, {}
    try:
        results, made = pickle.loads(data)  # noqa: S301 - from a child of this process
    except Exception:  # noqa: BLE001 - anything unreadable is redone here
        return {}, {}
    return results, made


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


from .loader import load, model_to_module  # noqa: E402 - tvmc's trio: load, compile, run
from .runner import RunResult, run  # noqa: E402

__all__ = ["STAGES", "RunResult", "build", "compile", "compile_to", "iter_stages", "load", "lower", "run"]
