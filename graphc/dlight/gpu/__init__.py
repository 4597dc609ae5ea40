"""GPU default-schedule rules.

The GPU rules (Matmul, GEMV, Reduction, GeneralReduction, Fallback) plug in here with the
same interface as the CPU ones: each is a `graphc.dlight.ScheduleRule` whose
`apply(func, target, tunable)` returns a `tir.Schedule` binding loops to blockIdx/threadIdx,
or None when it does not apply; `ApplyDefaultSchedule(gpu.Matmul(), ..., gpu.Fallback())`
runs them. None exist yet.
"""

__all__: list[str] = []
