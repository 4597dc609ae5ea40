"""What the report shows, gathered while the model compiles and runs: every stage's module, every
pass with its time and whether it changed the module, the operators each fused kernel holds,
the kernels' profile with their FLOPs and bytes, and the machine's measured peaks.
"""

from __future__ import annotations

import os
import platform
import time
from dataclasses import dataclass, field

import numpy as np

from ..driver import STAGES, iter_stages
from ..ir.instrument import PassInstrument
from ..ir.module import IRModule
from ..ir.structural import structural_equal
from ..ir.transform import PassContext
from ..relax import expr as relax_expr
from ..relax.op.registry import Op
from ..tir.analysis.flops import argument_bytes, estimate_flops
from ..tir.function import PrimFunc


@dataclass
class PassRecord:
    """One pass that ran: its name, nesting depth, wall seconds, whether it changed the module,
    and the compile stage it ran in."""

    name: str
    depth: int
    seconds: float
    changed: bool
    stage: str


@dataclass
class StageRecord:
    """A compile stage: its name, the seconds it took, and its result (an IRModule, or the
    Executable for "bytecode")."""

    name: str
    seconds: float
    result: object


@dataclass
class KernelRecord:
    """One kernel in the profile: calls, total seconds, FLOPs and bytes per call (None: unknown)."""

    name: str
    kind: str
    calls: int
    seconds: float
    share: float
    flops: int | None = None
    bytes: int | None = None

    @property
    def gflops(self) -> float | None:
        return self.flops * self.calls / self.seconds / 1e9 if self.flops and self.seconds else None

    @property
    def gbytes(self) -> float | None:
        return self.bytes * self.calls / self.seconds / 1e9 if self.bytes and self.seconds else None


@dataclass
class Peaks:
    """The machine's measured peaks: GFLOP/s of a float32 matrix product (numpy's BLAS) and
    GB/s of a large copy (bytes read plus written)."""

    gflops: float
    gbytes: float

    @staticmethod
    def measure(repeat: int = 5) -> Peaks:
        n = 512
        a = np.random.rand(n, n).astype("float32")
        b = np.random.rand(n, n).astype("float32")
        best = min(_timed(lambda: a @ b) for _ in range(repeat))
        src = np.ones(16 * 1024 * 1024, "float32")  # 64 MiB: past every cache
        dst = np.empty_like(src)
        copy = min(_timed(lambda: np.copyto(dst, src)) for _ in range(max(repeat // 2, 2)))
        return Peaks(2 * n**3 / best / 1e9, 2 * src.nbytes / copy / 1e9)


def _timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


@dataclass
class CompileRecord:
    """Everything `report` draws."""

    stages: list[StageRecord]
    passes: list[PassRecord]
    fused_members: dict[str, list[tuple[str, int | None]]]
    target: object
    steps: list[tuple[str, float]] = field(default_factory=list)
    kernels: list[KernelRecord] = field(default_factory=list)
    profile_total: float | None = None
    peaks: Peaks | None = None
    profile_note: str = ""

    def stage(self, name: str):
        for record in self.stages:
            if record.name == name:
                return record.result
        raise KeyError(name)


class _PassRecorder(PassInstrument):
    """Times every pass and notes whether it changed the module; keeps FuseOps' grouping."""

    def __init__(self):
        self.records: list[PassRecord] = []
        self.stage = "imported"
        self._open: list[tuple[str, float, IRModule]] = []
        self.fused_members: dict[str, list[tuple[str, int | None]]] = {}

    def run_before_pass(self, mod, info):
        self._open.append((info.name, time.perf_counter(), mod))

    def run_after_pass(self, mod, info):
        name, start, before = self._open.pop()
        seconds = time.perf_counter() - start
        self.records.append(
            PassRecord(name, len(self._open), seconds, not _same_module(before, mod), self.stage)
        )
        if name == "FuseOps":
            self.fused_members.update(_fused_groups(mod))


def _same_module(before: IRModule, after: IRModule) -> bool:
    if before is after:
        return True
    names = {gv.name_hint for gv in before.get_global_vars()}
    if names != {gv.name_hint for gv in after.get_global_vars()}:
        return False
    return all(before[n] is after[n] or structural_equal(before[n], after[n]) for n in names)


def _fused_groups(mod: IRModule) -> dict[str, list[tuple[str, int | None]]]:
    """Each fused ("Primitive") Relax function's operator calls, with their op_pattern."""
    groups = {}
    for gv, func in mod.items():
        if not isinstance(func, relax_expr.Function) or not (func.attrs or {}).get("Primitive"):
            continue
        members = []
        for block in func.body.blocks:
            for binding in block.bindings:
                value = binding.value
                if (
                    isinstance(value, relax_expr.Call)
                    and isinstance(value.op, Op)
                    and value.op.name == "relax.call_tir"
                ):
                    callee = value.args[0].name_hint
                    pattern = mod[callee].attrs.get("op_pattern") if callee in mod else None
                    members.append((callee, None if pattern is None else int(pattern)))
        groups[gv.name_hint] = members
    return groups


class _StepClock:
    """A compile's progress callback that times each step it announces (import, fusion,
    scheduling, lowering, machine code, bytecode), passing the calls on to `forward`."""

    def __init__(self, forward=None):
        self.forward = forward
        self.steps: list[tuple[str, float]] = []
        self._current: tuple[str, float] | None = None

    def __call__(self, message: str, done: int, total: int) -> None:
        if self._current is None or self._current[0] != message:
            self.finish()
            self._current = (message, time.perf_counter())
        if self.forward is not None:
            self.forward(message, done, total)

    def finish(self) -> list[tuple[str, float]]:
        if self._current is not None:
            message, start = self._current
            self.steps.append((message, time.perf_counter() - start))
            self._current = None
        return self.steps


def collect(
    model,
    target,
    *,
    example_inputs=None,
    dynamic_shapes=None,
    inputs=None,
    profile: bool = True,
    progress=None,
) -> CompileRecord:
    """Compile `model` stage by stage under a pass recorder, then (when `profile` and the target is
    the CPU) run it once warm and once profiled on `inputs` (default: `example_inputs`, else random
    inputs of the declared shapes)."""
    from ..target import Target

    target = Target.resolve(target)
    recorder = _PassRecorder()
    outer = PassContext.current()
    context = PassContext(
        outer.opt_level,
        outer.required_pass,
        outer.disabled_pass,
        list(outer.instruments) + [recorder],
        outer.config,
    )
    stages = []
    steps = _StepClock(progress)
    with context:
        start = time.perf_counter()
        for name, result in iter_stages(
            model, target, example_inputs=example_inputs, dynamic_shapes=dynamic_shapes, progress=steps
        ):
            now = time.perf_counter()
            stages.append(StageRecord(name, now - start, result))
            if name != STAGES[-1]:
                recorder.stage = STAGES[STAGES.index(name) + 1]
            start = time.perf_counter()
    record = CompileRecord(stages, recorder.records, recorder.fused_members, target, steps.finish())
    if not profile:
        record.profile_note = "not profiled (profile=False)"
    elif target.kind != "llvm":
        record.profile_note = (
            f"not profiled: kernels for {target.kind} run on a device this report does not time"
        )
    else:
        _profile(record, inputs if inputs is not None else example_inputs)
    return record


def _profile(record: CompileRecord, inputs) -> None:
    from ..runner import random_inputs, read_inputs
    from ..runtime import cpu
    from ..vm import VirtualMachine

    exe = record.stage("bytecode")
    if inputs is None:
        inputs = random_inputs(exe)
    elif not isinstance(inputs, dict | list | tuple):
        inputs = [inputs]
    args = [_as_array(x) for x in read_inputs(exe, inputs)]
    vm = VirtualMachine(exe, cpu())
    result = vm.profile("main", *args)
    fused = record.stage("fused")
    costs = {
        gv.name_hint: (estimate_flops(f), argument_bytes(f))
        for gv, f in fused.items()
        if isinstance(f, PrimFunc)
    }
    for row in result.rows:
        flops, nbytes = costs.get(row.name, (None, None))
        record.kernels.append(
            KernelRecord(row.name, row.kind, row.calls, row.total, row.share, flops, nbytes)
        )
    record.profile_total = result.total
    record.peaks = Peaks.measure()


def _as_array(x):
    if hasattr(x, "detach"):  # a torch tensor
        return x.detach().cpu().numpy()
    return x


def machine_summary() -> dict[str, str]:
    """The machine the report was made on: CPU name, cores, Python and graphc versions."""
    from .. import __version__

    try:
        import llvmlite.binding as llvm

        cpu_name = llvm.get_host_cpu_name()
    except Exception:  # noqa: BLE001 - a name for the page only
        cpu_name = platform.processor() or "unknown"
    return {
        "cpu": cpu_name,
        "cores": str(os.cpu_count()),
        "python": platform.python_version(),
        "graphc": __version__,
        "platform": platform.platform(),
    }


__all__ = [
    "CompileRecord",
    "KernelRecord",
    "PassRecord",
    "Peaks",
    "StageRecord",
    "collect",
    "machine_summary",
]
