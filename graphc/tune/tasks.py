"""Tuning tasks: the distinct kernels of a model as `graphc.compile` schedules them, with weights.

`extract_tasks` runs the compile pipeline of `graphc.compile` up to the point where the
default schedules would run (`driver.iter_stages` to "fused", then `driver.to_schedule`) and
returns one `Task` per distinct PrimFunc: kernels equal up to their names are one task
(keyed by `workload_key`, a structural digest), weighted by how often the model calls them.

>>> from graphc import te
>>> A = te.placeholder((8, 8), "float32", name="A"); B = te.placeholder((8, 8), "float32", name="B")
>>> k = te.reduce_axis((0, 8), "k")
>>> C = te.compute((8, 8), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
>>> task = Task.from_func(te.create_prim_func([A, B, C]), name="matmul")
>>> task.flops, task.weight, len(task.workload)
(1024, 1, 32)
"""

from __future__ import annotations

import dataclasses

from ..ir.module import IRModule
from ..tir.function import PrimFunc


def workload_key(func: PrimFunc) -> str:
    """The key of a kernel in the tuning records: a digest of its structure, without its name."""
    from ..ir.structural import structural_digest

    attrs = {k: v for k, v in func.attrs.items() if k not in ("global_symbol", "tir.is_scheduled")}
    bare = PrimFunc(func.params, func.body, func.ret_type, func.buffer_map, attrs)
    return structural_digest(bare).hex()[:32]


@dataclasses.dataclass
class Task:
    """One kernel to tune: its unscheduled PrimFunc, how often the model calls it, its FLOPs."""

    name: str
    func: PrimFunc
    workload: str
    weight: int = 1
    flops: int | None = None

    @staticmethod
    def from_func(func: PrimFunc, name: str = "main", weight: int = 1) -> Task:
        from ..tir.analysis.flops import estimate_flops

        return Task(name, func, workload_key(func), weight, estimate_flops(func))

    @property
    def static(self) -> bool:
        """Whether every buffer has a constant shape (a kernel with symbolic shapes is not measured)."""
        from ..tir.expr import IntImm

        return all(isinstance(d, IntImm | int) for buf in self.func.buffer_map.values() for d in buf.shape)

    def script(self) -> str:
        return self.func.script()


def extract_tasks(model, target="llvm", *, example_inputs=None, dynamic_shapes=None, pipeline=None,
                  params=None, shape_dict=None, dtype_dict=None) -> list[Task]:
    """The tasks of `model` (anything `graphc.compile` takes), most FLOPs x calls first."""
    from ..driver import iter_stages, to_schedule

    stages = iter_stages(model, target, example_inputs=example_inputs, dynamic_shapes=dynamic_shapes,
                         pipeline=pipeline, params=params, shape_dict=shape_dict, dtype_dict=dtype_dict)
    fused = next(mod for stage, mod in stages if stage == "fused")
    stages.close()
    return tasks_of_module(to_schedule(fused))


def tasks_of_module(mod: IRModule) -> list[Task]:
    """The tasks of a module whose kernels are ready to be scheduled (`extract_tasks`' last step)."""
    calls = _call_counts(mod)
    tasks: dict[str, Task] = {}
    for gv, func in mod.items():
        if not isinstance(func, PrimFunc) or func.attrs.get("tir.is_scheduled", False):
            continue
        task = Task.from_func(func, gv.name_hint, calls.get(gv.name_hint, 1))
        if task.workload in tasks:
            tasks[task.workload].weight += task.weight
        else:
            tasks[task.workload] = task
    return sorted(tasks.values(), key=lambda t: -(t.flops or 0) * t.weight)


def _call_counts(mod: IRModule) -> dict[str, int]:
    """How many call sites in the Relax functions name each GlobalVar."""
    from ..ir.module import GlobalVar
    from ..relax import expr as relax_expr
    from ..relax.expr_functor import ExprVisitor

    counts: dict[str, int] = {}

    class Count(ExprVisitor):
        def visit_Call(self, call):  # noqa: N802 - the visitor's naming
            for arg in (call.op, *call.args):
                if isinstance(arg, GlobalVar):
                    counts[arg.name_hint] = counts.get(arg.name_hint, 0) + 1
            super().visit_Call(call)

    for _, func in mod.items():
        if isinstance(func, relax_expr.Function):
            Count().visit_expr(func)
    return counts


__all__ = ["Task", "extract_tasks", "tasks_of_module", "workload_key"]
