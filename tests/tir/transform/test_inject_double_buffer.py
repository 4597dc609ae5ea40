"""InjectDoubleBuffer and the copy-aware conflicts of InjectThreadSync, on lowered PrimFuncs."""

from graphc.script import from_source
from graphc.tir.stmt import Allocate, For
from graphc.tir.transform.inject_double_buffer import STAGE_ATTR, inject_double_buffer
from graphc.tir.transform.inject_thread_sync import inject_thread_sync


def _walk(func):
    from graphc.tir.schedule.state import walk

    return list(walk(func.body))


def _func(body: str, extent: str = "4"):
    return from_source(f'''
@T.prim_func
def main(A: T.Buffer((64,), "float32"), B: T.Buffer((16,), "float32"), n: T.int32):
    tx = T.launch_thread("threadIdx.x", 16)
    S = T.allocate([16], "float32", "shared")
    S_1 = T.Buffer((16,), "float32", data=S, scope="shared")
    for ko in T.serial({extent}, annotations={{"double_buffer": 1}}):
{body}
''')


STEP = '''        S_1[tx] = A[ko * 16 + tx]
        B[tx] = B[tx] + S_1[15 - tx]'''


def _shared_sizes(func):
    return [int(s.extents[0]) for s in _walk(func) if isinstance(s, Allocate) and s.scope == "shared"]


def test_doubles_the_tile_and_fetches_one_step_ahead():
    out = inject_double_buffer(_func(STEP))
    assert _shared_sizes(out) == [32]
    text = out.script()
    assert "S_1[(ko + 1) % 2 * 16 + tx] = A[(ko + 1) * 16 + tx]" in text
    assert "S_1[ko % 2 * 16 + (15 - tx)]" in text
    assert "S_1[tx] = A[tx]" in text  # the prologue: step 0 into copy 0
    assert not any(isinstance(s, For) and s.annotations for s in _walk(out))


def test_one_barrier_per_step_and_the_stage_attrs_are_dropped():
    synced = inject_thread_sync(inject_double_buffer(_func(STEP)))
    (loop,) = [s for s in _walk(synced) if isinstance(s, For)]
    assert loop.script().count("tvm_storage_sync") == 1
    assert synced.script().count("tvm_storage_sync") == 2  # after the prologue, at the end of a step
    assert STAGE_ATTR not in synced.script()
    # without the annotation: a barrier between the fetch and the multiply too
    plain = inject_thread_sync(_func(STEP).with_body(_strip(_func(STEP).body)))
    (loop,) = [s for s in _walk(plain) if isinstance(s, For)]
    assert loop.script().count("tvm_storage_sync") == 2


def _strip(body):
    from graphc.tir.functor import StmtMutator

    class Strip(StmtMutator):
        def visit_For(self, op):
            return super().visit_For(op).replace(annotations={})

    return Strip().visit_stmt(body)


def test_symbolic_trip_count():
    out = inject_double_buffer(_func(STEP, "n"))
    assert _shared_sizes(out) == [32]
    assert "if ko + 1 < n:" in out.script()


def test_left_alone_where_it_does_not_apply():
    # the loop runs once
    assert _shared_sizes(inject_double_buffer(_func(STEP, "1"))) == [16]
    # no producer first: the step reads the tile before writing it
    swapped = '''        B[tx] = B[tx] + S_1[15 - tx]
        S_1[tx] = A[ko * 16 + tx]'''
    assert _shared_sizes(inject_double_buffer(_func(swapped))) == [16]
    # the consumer writes the staged tile too
    rewrites = STEP + "\n        S_1[tx] = T.float32(0)"
    assert _shared_sizes(inject_double_buffer(_func(rewrites))) == [16]


def test_a_tile_read_after_the_loop_is_not_doubled():
    func = from_source('''
@T.prim_func
def main(A: T.Buffer((64,), "float32"), B: T.Buffer((16,), "float32")):
    tx = T.launch_thread("threadIdx.x", 16)
    S = T.allocate([16], "float32", "shared")
    S_1 = T.Buffer((16,), "float32", data=S, scope="shared")
    for ko in T.serial(4, annotations={"double_buffer": 1}):
        S_1[tx] = A[ko * 16 + tx]
        B[tx] = B[tx] + S_1[15 - tx]
    B[tx] = S_1[tx]
''')
    out = inject_double_buffer(func)
    assert _shared_sizes(out) == [16]
    assert "double_buffer" not in out.script()
