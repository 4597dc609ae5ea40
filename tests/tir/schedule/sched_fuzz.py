"""Random schedules on random tensor programs: the engine behind the schedule property test.

`random_program(data)` draws a PrimFunc (elementwise, broadcast, reductions, matmul, conv,
chains, softmax, reshapes; odd sizes, sometimes a symbolic one) and `check_random_schedule`
applies random primitives with random (often invalid) arguments, one at a time. Every step
must either raise ScheduleError and leave the schedule exactly as it was (module and trace),
or give a well-formed module that computes what the original does, checked by building both
with LLVM and comparing outputs on the same random inputs. Any other exception is a bug.

Used by tests/tir/schedule/test_property.py (a few examples) and by
benchmarks/schedule_fuzz.py (many, with counts of the steps run and refused).
"""

from __future__ import annotations

import dataclasses

import numpy as np
from hypothesis import strategies as st

import graphc
from graphc import te, tir
from graphc.tir import ScheduleError
from graphc.tir.analysis.verify_well_formed import verify_well_formed

SIZES = st.sampled_from([1, 2, 3, 5, 7, 8, 9])
SYMBOLIC_VALUE = 7  # the value a symbolic size takes when the program runs


@dataclasses.dataclass
class Stats:
    """How many random steps ran, how many each primitive had refused, and failures seen."""

    programs: int = 0
    steps: int = 0
    refused: int = 0
    by_primitive: dict = dataclasses.field(default_factory=dict)

    def note(self, op: str, refused: bool) -> None:
        self.steps += 1
        self.refused += refused
        ran, ref = self.by_primitive.get(op, (0, 0))
        self.by_primitive[op] = (ran + 1, ref + refused)


# -- programs ------------------------------------------------------------------------------


def _dim(data, symbolic: bool, name: str):
    return te.var(name) if symbolic else data.draw(SIZES, label=name)


def _elementwise(data, sym):
    n, m = _dim(data, sym, "n"), data.draw(SIZES)
    A = te.placeholder((n, m), name="A")
    B = te.compute((n, m), lambda i, j: A[i, j] * 2.0 + 1.0, name="B")
    return [A, B]


def _broadcast(data, sym):
    n, m = _dim(data, sym, "n"), data.draw(SIZES)
    A, B = te.placeholder((n, m), name="A"), te.placeholder((m,), name="B")
    return [A, B, te.compute((n, m), lambda i, j: A[i, j] + B[j], name="C")]


def _reduction(data, sym):
    n, m = data.draw(SIZES), _dim(data, sym, "m")
    A = te.placeholder((n, m), name="A")
    k = te.reduce_axis((0, m), "k")
    reducer = data.draw(st.sampled_from([te.sum, te.max]))
    return [A, te.compute((n,), lambda i: reducer(A[i, k], axis=k), name="B")]


def _matmul(data, sym):
    n, m, r = _dim(data, sym, "n"), data.draw(SIZES), data.draw(SIZES)
    A, B = te.placeholder((n, r), name="A"), te.placeholder((r, m), name="B")
    k = te.reduce_axis((0, r), "k")
    return [A, B, te.compute((n, m), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")]


def _mm_relu(data, sym):
    n, m, r = _dim(data, sym, "n"), data.draw(SIZES), data.draw(SIZES)
    A, B = te.placeholder((n, r), name="A"), te.placeholder((r, m), name="B")
    k = te.reduce_axis((0, r), "k")
    Y = te.compute((n, m), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="Y")
    return [A, B, te.compute((n, m), lambda i, j: te.max(Y[i, j], 0.0), name="C")]


def _conv(data, sym):
    c, f = data.draw(st.sampled_from([1, 2, 3])), data.draw(st.sampled_from([1, 2, 3]))
    h, w = data.draw(st.sampled_from([3, 4, 5, 7])), data.draw(st.sampled_from([3, 5, 6]))
    x, wt = te.placeholder((1, c, h, w), name="x"), te.placeholder((f, c, 3, 3), name="w")
    pad = te.compute(
        (1, c, h + 2, w + 2),
        lambda n, ci, y, z: te.if_then_else(
            te.all(y >= 1, y <= h, z >= 1, z <= w), x[n, ci, y - 1, z - 1], 0.0
        ),
        name="pad",
    )
    rc, ry, rx = te.reduce_axis((0, c), "rc"), te.reduce_axis((0, 3), "ry"), te.reduce_axis((0, 3), "rx")
    out = te.compute(
        (1, f, h, w),
        lambda n, fo, y, z: te.sum(pad[n, rc, y + ry, z + rx] * wt[fo, rc, ry, rx], axis=[rc, ry, rx]),
        name="conv",
    )
    return [x, wt, out]


def _chain(data, sym):
    n, m = _dim(data, sym, "n"), data.draw(SIZES)
    A = te.placeholder((n, m), name="A")
    B = te.compute((n, m), lambda i, j: te.exp(A[i, j] * 0.5), name="B")
    C = te.compute((n, m), lambda i, j: B[i, j] + A[i, j], name="C")
    return [A, te.compute((n, m), lambda i, j: C[i, j] * C[i, j], name="D")]


def _softmax(data, sym):
    n, m = data.draw(SIZES), _dim(data, sym, "m")
    A = te.placeholder((n, m), name="A")
    k1, k2 = te.reduce_axis((0, m), "k1"), te.reduce_axis((0, m), "k2")
    mx = te.compute((n,), lambda i: te.max(A[i, k1], axis=k1), name="mx")
    e = te.compute((n, m), lambda i, j: te.exp(A[i, j] - mx[i]), name="e")
    total = te.compute((n,), lambda i: te.sum(e[i, k2], axis=k2), name="total")
    return [A, te.compute((n, m), lambda i, j: e[i, j] / total[i], name="out")]


def _reshape(data, sym):
    n, m = data.draw(SIZES), data.draw(SIZES)
    A = te.placeholder((m, n), name="A")
    B = te.compute((n, m), lambda i, j: A[j, i] + 1.0, name="B")
    return [A, te.compute((n * m,), lambda k: B[k // m, k % m] * 3.0, name="C")]


def _stencil(data, sym):
    n = data.draw(st.sampled_from([3, 5, 8, 9]))
    A = te.placeholder((n,), name="A")
    B = te.compute((n,), lambda i: A[i] * 2.0, name="B")
    return [A, te.compute((n - 2,), lambda i: B[i] + B[i + 1] + B[i + 2], name="C")]


def _two_outputs(data, sym):
    """B is an output that C also reads (TVM refuses to inline C into B's block, or B into C)."""
    n, m = _dim(data, sym, "n"), data.draw(SIZES)
    A = te.placeholder((n, m), name="A")
    B = te.compute((n, m), lambda i, j: A[i, j] * 2.0, name="B")
    return [A, B, te.compute((n, m), lambda i, j: B[i, j] + 1.0, name="C")]


def _argmax(data, sym):
    """A tuple reduction (index, value) as TVM's argmax: one let and one store per buffer."""

    def fcombine(x, y):
        keep = x[1] >= y[1]
        return tir.Select(keep, x[0], y[0], x[0].dtype), tir.Select(keep, x[1], y[1], x[1].dtype)

    argmax = te.comm_reducer(fcombine, lambda t0, t1: (tir.const(-1, t0), tir.min_value(t1)), name="argmax")
    n, m = data.draw(SIZES), _dim(data, sym, "m")
    idx, val = te.placeholder((n, m), name="idx", dtype="int32"), te.placeholder((n, m), name="val")
    k = te.reduce_axis((0, m), "k")
    out_i, out_v = te.compute((n,), lambda i: argmax((idx[i, k], val[i, k]), axis=k), name="T")
    return [idx, val, out_i, out_v]


PROGRAMS = {
    "elementwise": _elementwise,
    "broadcast": _broadcast,
    "reduction": _reduction,
    "matmul": _matmul,
    "mm_relu": _mm_relu,
    "conv": _conv,
    "chain": _chain,
    "softmax": _softmax,
    "reshape": _reshape,
    "stencil": _stencil,
    "two_outputs": _two_outputs,
    "argmax": _argmax,
}
SYMBOLIC_OK = {
    "elementwise", "broadcast", "reduction", "matmul", "mm_relu", "chain", "softmax", "two_outputs", "argmax"
}  # fmt: skip


def random_program(data):
    """(name, PrimFunc, symbolic?) drawn from PROGRAMS."""
    name = data.draw(st.sampled_from(sorted(PROGRAMS)), label="program")
    sym = name in SYMBOLIC_OK and data.draw(st.booleans(), label="symbolic")
    return name, te.create_prim_func(PROGRAMS[name](data, sym)), sym


# -- running -------------------------------------------------------------------------------


def _arrays(func, seed: int):
    rng = np.random.default_rng(seed)
    arrays = []
    for buf in (func.buffer_map[p] for p in func.params if p in func.buffer_map):
        shape = [int(d) if isinstance(d, tir.IntImm) else SYMBOLIC_VALUE for d in buf.shape]
        arrays.append(rng.standard_normal(shape).astype(buf.dtype))
    return arrays


def run(func, seed: int = 0) -> list:
    """Build `func` with LLVM and run it on random inputs; returns every argument array after."""
    arrays = _arrays(func, seed)
    graphc.build(func, target="llvm")["main"](*arrays)
    return arrays


def assert_same(expected: list, got: list, what: str) -> None:
    for k, (x, y) in enumerate(zip(expected, got)):
        np.testing.assert_allclose(y, x, rtol=1e-4, atol=1e-4, err_msg=f"{what}: argument {k} differs")


# -- steps ---------------------------------------------------------------------------------

OPS = [
    "split", "fuse", "reorder", "parallel", "vectorize", "unroll", "compute_inline",
    "reverse_compute_inline", "compute_at", "reverse_compute_at", "decompose_reduction",
    "rfactor", "transform_layout", "blockize", "pad_einsum", "reindex", "merge",
    "loop_partition", "cache_read", "cache_write", "reindex_cache_read", "reindex_cache_write",
    "set_scope", "storage_align", "add_unit_loop", "annotate", "unannotate",
]  # fmt: skip
SCOPES = ["global", "local", "shared", "test_scope"]
LAYOUTS = {  # index maps by rank: bijective ones and ones that need padding
    1: [lambda i: (i // 2, i % 2), lambda i: (i // 4, i % 4)],
    2: [lambda i, j: (j, i), lambda i, j: (i // 2, j, i % 2), lambda i, j: (j // 4, i, j % 4)],
}


def _index_map(data, n: int):
    """A random index map over `n` block iters: a permutation, a reversal, or a non-injective sum."""
    kind = data.draw(st.sampled_from(["identity", "reverse", "sum", "drop"]))
    if kind == "identity" or n == 0:
        return lambda *v: tuple(v)
    if kind == "reverse":
        return lambda *v: tuple(reversed(v))
    if kind == "sum":
        return lambda *v: (sum(v[1:], v[0]),)
    return lambda *v: tuple(v[1:])


def _blocks(sch):
    return [b for b in sch.get_child_blocks(sch.get_block("root"))]


def apply_random_step(sch, data, symbolic: bool, drawn: list) -> str:
    """Apply one random primitive with random arguments to `sch` (its name goes to `drawn`)."""
    blocks = _blocks(sch)
    block = data.draw(st.sampled_from(blocks), label="block")
    loops = sch.get_loops(block)
    op = data.draw(st.sampled_from(OPS), label="op")
    drawn.append(op)
    pick = lambda xs, label="arg": data.draw(st.sampled_from(xs), label=label)  # noqa: E731
    if op in ("compute_inline", "reverse_compute_inline"):
        getattr(sch, op)(block if data.draw(st.booleans()) else sch.get(block).name_hint)
    elif op == "transform_layout":
        written = [w.buffer for w in sch.get(block).writes]
        allocated = [b for b in written if b not in sch.mod["main"].buffer_map.values()]
        if allocated:
            buf = pick(allocated)
            index_map = pick(LAYOUTS.get(len(buf.shape), [lambda *ix: ix]))
            sch.transform_layout(block, buf.name, index_map, pad_value=pick([None, 0.0]))
    elif op in ("compute_at", "reverse_compute_at"):
        other_loops = sch.get_loops(pick(blocks))
        if other_loops:
            index = pick([-1, -1, -2, 0, 1])
            keep = data.draw(st.booleans())
            getattr(sch, op)(block, pick(other_loops), preserve_unit_loops=keep, index=index)
    elif op in ("cache_read", "cache_write", "reindex_cache_read", "reindex_cache_write"):
        index = data.draw(st.integers(0, 2))
        scope = pick(SCOPES)
        if op.startswith("reindex"):
            getattr(sch, op)(block, index, scope, _index_map(data, len(sch.get(block).iter_vars)))
        else:
            getattr(sch, op)(block, index, scope)
    elif op == "set_scope":
        sch.set_scope(block, data.draw(st.integers(0, 1)), pick(SCOPES))
    elif op == "storage_align":
        sch.storage_align(block, data.draw(st.integers(0, 1)), data.draw(st.integers(-2, 2)),
                          pick([0, 4, 8]), data.draw(st.integers(0, 2)))  # fmt: skip
    elif op == "reindex":
        sch.reindex(block, (pick(["read", "write"]), data.draw(st.integers(0, 2))))
    elif op == "pad_einsum":
        n = len(sch.get(block).iter_vars)
        sch.pad_einsum(block, data.draw(st.lists(st.integers(1, 4), min_size=n, max_size=n)))
    elif op == "merge":
        other_loops = sch.get_loops(pick(blocks))
        if loops and other_loops:
            sch.merge(pick(loops), pick(other_loops))
    elif op == "add_unit_loop":
        sch.add_unit_loop(block if not loops or data.draw(st.booleans()) else pick(loops))
    elif not loops:
        return op
    elif op == "split":
        factor = data.draw(st.integers(-1, 5))
        factors = pick([[None, factor], [factor, None], [None, factor, 2], [factor, 3]])
        disable = not symbolic and data.draw(st.booleans())  # a symbolic extent would be a promise
        sch.split(pick(loops), factors=factors, disable_predication=disable)
    elif op == "fuse":
        k = data.draw(st.integers(0, len(loops) - 1))
        sch.fuse(*loops[k : k + data.draw(st.integers(1, 3))])
    elif op == "reorder":
        chosen = data.draw(st.permutations(loops))
        sch.reorder(*chosen[: data.draw(st.integers(1, len(chosen)))])
    elif op == "blockize":
        sch.blockize(pick(loops), preserve_unit_iters=data.draw(st.booleans()))
    elif op == "rfactor":
        ndim = len(sch.get(block).writes[0].buffer.shape) if sch.get(block).writes else 0
        sch.rfactor(pick(loops), data.draw(st.integers(-ndim - 2, ndim + 1)))
    elif op == "loop_partition":
        factors = pick([[1, None], [None, 2], [2, 1, None], [3, 3]])
        sch.loop_partition(pick(loops), factors, data.draw(st.booleans()))
    elif op in ("parallel", "vectorize", "unroll"):
        getattr(sch, op)(pick(loops))
    elif op == "decompose_reduction":
        sch.decompose_reduction(block, pick(loops))
    elif op == "annotate":
        sch.annotate(pick(loops) if data.draw(st.booleans()) else block, "pragma_note", 1)
    elif op == "unannotate":
        sch.unannotate(pick(loops) if data.draw(st.booleans()) else block, "pragma_note")
    return op


def check_random_schedule(data, stats: Stats, max_steps: int = 6) -> None:
    """Draw a program and up to `max_steps` random steps; check each one (see the module docstring)."""
    name, func, symbolic = random_program(data)
    expected = run(func)
    stats.programs += 1
    sch = tir.Schedule(func)
    for _ in range(data.draw(st.integers(1, max_steps), label="steps")):
        before = {gv.name_hint: fn for gv, fn in sch.mod.items()}
        trace_len = len(sch.trace)
        drawn: list = []
        try:
            op = apply_random_step(sch, data, symbolic, drawn)
        except ScheduleError as err:
            op = drawn[-1] if drawn else "get_loops"
            stats.note(op, refused=True)
            for fname, fn in before.items():
                assert sch.mod[fname] is fn, f"{op} raised ScheduleError but changed the module:\n{err}"
            recorded = [inst.name for inst in sch.trace.insts[trace_len:]]
            assert op not in recorded, f"{op} raised ScheduleError but was recorded in the trace"
            continue
        stats.note(op, refused=False)
        if sch.mod["main"] is before["main"]:
            continue
        verify_well_formed(sch.mod["main"])
        assert_same(expected, run(sch.mod["main"]), f"{name}: after {op}\n{sch.trace}")
    replay = tir.Schedule(func)
    sch.trace.apply_to(replay)
    from graphc.ir import structural_equal

    assert structural_equal(replay.mod["main"], sch.mod["main"]), "replaying the trace gave another module"
