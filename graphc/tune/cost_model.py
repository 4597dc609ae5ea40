"""The cost model: features of a candidate's lowered TIR, and a gradient-boosted regressor on them.

`features(func)` lowers a scheduled PrimFunc (the TensorIR lowering pipeline) and reads the
loop nest the code generator will see: how much of the work runs in parallel loops and
how wide, how much is vectorized and at what width, what is unrolled, the innermost trip
counts, the bytes each store's accesses touch within the innermost one to four loops
(a cache-footprint proxy), local and global allocations, FLOPs, argument bytes and the
arithmetic intensity; on a GPU target the threads per block, the thread blocks and the
shared memory (0 for a CPU kernel). The search appends the candidate's decisions (the sampled tile
sizes and choices, log-scaled).

`CostModel` is scikit-learn's `HistGradientBoostingRegressor` (docs/tuning.md says why)
trained online, per task, on the measured candidates: it predicts log(seconds), so ranking
by prediction puts the expected fastest first. Until it has seen `min_samples` candidates
it has no opinion (`predict` returns None) and the search measures what it samples.

>>> from graphc import te
>>> A = te.placeholder((64, 64), "float32", name="A")
>>> B = te.compute((64, 64), lambda i, j: A[i, j] * 2.0, name="B")
>>> f = features(te.create_prim_func([A, B]))
>>> len(f) == len(FEATURE_NAMES), f[FEATURE_NAMES.index("log2_flops")]
(True, 12.0)
"""

from __future__ import annotations

import math

import numpy as np

from ..ir.dtype import DataType
from ..ir.module import IRModule
from ..tir import expr as tir_expr
from ..tir import stmt as tir_stmt
from ..tir.function import PrimFunc
from ..tir.functor import StmtExprVisitor

FEATURE_NAMES = (
    "log2_flops", "log2_arg_bytes", "log2_intensity",
    "log2_parallel_extent", "parallel_loops", "parallel_work_share",
    "vector_width", "vector_work_share", "unrolled_loops", "log2_unrolled_extent",
    "max_depth", "serial_loops", "log2_innermost_extent",
    "static_stores", "static_loads",
    "log2_bytes_level1", "log2_bytes_level2", "log2_bytes_level3", "log2_bytes_level4",
    "log2_local_alloc_bytes", "log2_global_alloc_bytes", "allocations",
    "log2_threads_per_block", "log2_thread_blocks", "log2_shared_alloc_bytes",
)


def _log2(x: float) -> float:
    return math.log2(x) if x > 0 else 0.0


def _int(expr) -> int | None:
    return expr.value if isinstance(expr, tir_expr.IntImm) else None


class _Walk(StmtExprVisitor):
    """One pass over the lowered body, keeping the loops around each store."""

    def __init__(self):
        self.loops: list[tir_stmt.For] = []
        self.stores = self.loads = 0
        self.parallel_extent, self.parallel_loops = 1, 0
        self.unrolled_loops, self.unrolled_extent, self.serial_loops = 0, 1, 0
        self.max_depth, self.vector_width = 0, 1
        self.work = self.parallel_work = self.vector_work = 0.0
        self.innermost = []  # (trip count of the store, innermost serial extent)
        self.level_bytes = [0.0] * 4
        self.local_bytes = self.global_bytes = 0
        self.allocations = 0
        self.threads = self.blocks = 1  # GPU: threadIdx.* and blockIdx.* extents (each axis once)
        self.shared_bytes = 0
        self._bound: dict = {}
        self._accesses: list = []

    def visit_For(self, op):  # noqa: N802 - the visitor's naming
        extent = _int(op.extent) or 1
        if op.kind == tir_stmt.ForKind.PARALLEL:
            self.parallel_loops += 1
            self.parallel_extent *= extent
        elif op.kind == tir_stmt.ForKind.VECTORIZED:
            self.vector_width = max(self.vector_width, extent)
        elif op.kind == tir_stmt.ForKind.UNROLLED:
            self.unrolled_loops += 1
            self.unrolled_extent *= extent
        elif op.kind == tir_stmt.ForKind.THREAD_BINDING and op.thread_binding is not None:
            self._bind(op.thread_binding.thread_tag, extent)
        else:
            self.serial_loops += 1
        self.loops.append(op)
        self.max_depth = max(self.max_depth, len(self.loops))
        self.visit_stmt(op.body)
        self.loops.pop()

    def _bind(self, tag: str, extent: int) -> None:
        if tag not in self._bound:  # a kernel binds an axis once per stage; count it once
            self._bound[tag] = extent
            if tag.startswith("threadIdx"):
                self.threads *= extent
            elif tag.startswith("blockIdx"):
                self.blocks *= extent

    def visit_AttrStmt(self, op):  # noqa: N802 - lowered thread bindings: launch_thread
        if op.attr_key == "thread_extent" and getattr(op.node, "thread_tag", None):
            self._bind(op.node.thread_tag, _int(op.value) or 1)
        super().visit_AttrStmt(op)

    def visit_Allocate(self, op):  # noqa: N802
        size = math.prod(_int(e) or 1 for e in op.extents) * _bytes(op.dtype)
        self.allocations += 1
        if op.scope == "global":
            self.global_bytes += size
        elif op.scope == "shared":
            self.shared_bytes += size
        else:
            self.local_bytes += size
        self.visit_stmt(op.body)

    def visit_BufferLoad(self, op):  # noqa: N802
        self.loads += 1
        self._accesses.append(op)
        super().visit_BufferLoad(op)

    def visit_BufferStore(self, op):  # noqa: N802
        self.stores += 1
        self._accesses = [op]
        self.visit_expr(op.value)
        for index in op.indices:
            self.visit_expr(index)
        trips = math.prod(_int(loop.extent) or 1 for loop in self.loops)
        lanes = max([loop.extent.value for loop in self.loops if loop.kind == tir_stmt.ForKind.VECTORIZED
                     and _int(loop.extent)] + [_lanes(op.value)])
        self.work += trips
        if any(loop.kind == tir_stmt.ForKind.PARALLEL for loop in self.loops):
            self.parallel_work += trips
        if lanes > 1:
            self.vector_work += trips
            self.vector_width = max(self.vector_width, lanes)
        serial = [loop for loop in self.loops if loop.kind == tir_stmt.ForKind.SERIAL]
        self.innermost.append((trips, _int(serial[-1].extent) or 1 if serial else 1))
        for level in range(4):
            inner = self.loops[len(self.loops) - level - 1:] if level < len(self.loops) else self.loops
            self.level_bytes[level] += sum(_footprint(access, inner) for access in self._accesses)
        self._accesses = []


def _lanes(expr) -> int:
    dtype = getattr(expr, "dtype", None)
    return DataType(str(dtype)).lanes if dtype is not None else 1


def _bytes(dtype) -> int:
    t = DataType(str(dtype))
    return max(t.bits // 8, 1) * t.lanes


def _footprint(access, loops) -> float:
    """Bytes `access` touches while `loops` (innermost ones) run: the extents of the loops its
    index uses, times the element size."""
    from ..tir.analysis.var_use import uses_var

    count = 1
    for loop in loops:
        if any(uses_var(index, loop.loop_var) for index in access.indices):
            count *= _int(loop.extent) or 1
    return float(count * _bytes(access.buffer.dtype))


def lower(func: PrimFunc) -> PrimFunc:
    """`func` through the structural part of the TensorIR lowering pipeline: the loop nest, the
    allocations and the flat accesses the code generator reads, without the passes that only
    rewrite expressions or pad operand tiles (`Simplify`, `RemoveNoOp`,
    `PadConflictingOperandTile`: two thirds of the pipeline's time, and the pool is ranked
    before any candidate of it is built)."""
    from ..ir.transform import Sequential
    from ..tir.transform.pipeline import lower_pipeline

    skip = ("Simplify", "RemoveNoOp", "PadConflictingOperandTile")
    full = lower_pipeline()
    light = Sequential([p for p in full.passes if type(p).__name__ not in skip and
                        getattr(p, "name", "") not in skip], name="tune.features.lower")
    return light(IRModule({"main": func.with_attr("global_symbol", "main")}))["main"]


def features(func: PrimFunc, lowered: PrimFunc | None = None) -> list[float]:
    """The feature vector of the scheduled PrimFunc `func` (names in `FEATURE_NAMES`)."""
    from ..tir.analysis.flops import argument_bytes, estimate_flops

    lowered = lowered if lowered is not None else lower(func)
    walk = _Walk()
    walk.visit_stmt(lowered.body)
    flops = estimate_flops(func) or 0
    arg_bytes = argument_bytes(func) or 0
    work = max(walk.work, 1.0)
    innermost = sum(t * e for t, e in walk.innermost) / work if walk.innermost else 1.0
    return [
        _log2(flops), _log2(arg_bytes), _log2(flops / arg_bytes) if arg_bytes and flops else 0.0,
        _log2(walk.parallel_extent), float(walk.parallel_loops), walk.parallel_work / work,
        float(walk.vector_width), walk.vector_work / work, float(walk.unrolled_loops),
        _log2(walk.unrolled_extent),
        float(walk.max_depth), float(walk.serial_loops), _log2(innermost),
        float(walk.stores), float(walk.loads),
        *(_log2(b / max(len(walk.innermost), 1)) for b in walk.level_bytes),
        _log2(walk.local_bytes), _log2(walk.global_bytes), float(walk.allocations),
        _log2(walk.threads), _log2(walk.blocks), _log2(walk.shared_bytes),
    ]


def decision_features(decisions, length: int = 24) -> list[float]:
    """A fixed-length vector of a candidate's decisions (integers log-scaled, lists flattened)."""
    values: list[float] = []

    def add(x) -> None:
        if isinstance(x, list | tuple):
            for y in x:
                add(y)
        elif isinstance(x, bool):
            values.append(float(x))
        elif isinstance(x, int | float):
            values.append(_log2(x) if x > 0 else float(x))
        else:
            values.append(float(hash(str(x)) % 97))

    for item in decisions:
        add(item[1] if isinstance(item, list | tuple) and len(item) == 2 else item)
    values = values[:length]
    return values + [0.0] * (length - len(values))


class CostModel:
    """Predicts log(seconds) of a task's candidates from their features; trained online."""

    def __init__(self, min_samples: int = 8, seed: int = 0):
        self.min_samples, self.seed = min_samples, seed
        self.xs: list[list[float]] = []
        self.ys: list[float] = []
        self._model = None
        self._dirty = False

    def update(self, x: list[float], seconds: float) -> None:
        """Learn that the candidate with features `x` took `seconds` (inf: it failed)."""
        if not math.isfinite(seconds):
            finite = [y for y in self.ys if math.isfinite(y)]
            y = (max(finite) + 1.0) if finite else 0.0  # worse than anything that ran
        else:
            y = math.log(max(seconds, 1e-9))
        self.xs.append(list(x))
        self.ys.append(y)
        self._dirty = True

    @property
    def trained(self) -> bool:
        return len(self.ys) >= self.min_samples

    def _fit(self) -> None:
        from sklearn.ensemble import HistGradientBoostingRegressor

        model = HistGradientBoostingRegressor(max_iter=60, learning_rate=0.15, min_samples_leaf=2,
                                              random_state=self.seed)
        with _one_thread():
            model.fit(np.asarray(self.xs), np.asarray(self.ys))
        self._model, self._dirty = model, False

    def predict(self, xs: list[list[float]]) -> list[float] | None:
        """Predicted log(seconds) of each feature vector, or None while untrained."""
        if not self.trained or not xs:
            return None
        if self._dirty or self._model is None:
            self._fit()
        with _one_thread():
            return [float(v) for v in self._model.predict(np.asarray(xs))]


def _one_thread():
    """scikit-learn's OpenMP on one thread: a few hundred samples take milliseconds on one, while
    a team of threads waiting at barriers on a loaded machine took seconds of wall time (and
    0.3 s of CPU) per fit, more than a candidate's build."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(1)


def require_sklearn() -> None:
    """Raise a clear error when scikit-learn (the cost model's library) is missing."""
    try:
        import sklearn  # noqa: F401
    except ImportError as err:
        raise ImportError("graphc's tuner needs scikit-learn for its cost model: pip install "
                          "'graphc[tune]' (or pip install scikit-learn)") from err


__all__ = ["FEATURE_NAMES", "CostModel", "decision_features", "features", "lower", "require_sklearn"]
