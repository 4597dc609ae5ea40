"""graphc.tune for GPU targets: OpenCL on PoCL (a CPU device: the mechanics, not GPU timings),
CUDA refused without a device; the GPU rules' decisions as sampling instructions (defaults
unchanged, sampled variants right on PoCL, candidates within the target's limits)."""

import json
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import graphc
from graphc import te
from graphc.dlight.gpu import decisions
from graphc.errors import GraphcError, ScheduleError
from graphc.ir.module import IRModule
from graphc.ir.structural import structural_equal
from graphc.script import from_source
from graphc.target import Target
from graphc.tir import PrimFunc
from graphc.tir.schedule import DefaultSampler, RandomSampler
from graphc.tune import rule_of, sample_schedule, scheduled_func
from graphc.tune.apply import replay
from graphc.tune.database import Database, TuningRecordWarning, target_key
from graphc.tune.tasks import extract_tasks, workload_key

SOURCE = '''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((64, 64), "float32"), w: R.Tensor((64, 64), "float32")):
        with R.dataflow():
            y = R.matmul(x, w)
            R.output(y)
        return y
'''


def opencl_device():
    dev = graphc.opencl(0)
    if not dev.exist:
        pytest.skip("no OpenCL platform (install PoCL: apt-get install pocl-opencl-icd)")
    return dev


def matmul(m, n, k, transposed=False):
    A = te.placeholder((m, k), name="A")
    B = te.placeholder((n, k) if transposed else (k, n), name="B")
    r = te.reduce_axis((0, k), "r")
    if transposed:
        C = te.compute((m, n), lambda i, j: te.sum(A[i, r] * B[j, r], axis=r), name="C")
    else:
        C = te.compute((m, n), lambda i, j: te.sum(A[i, r] * B[r, j], axis=r), name="C")
    return te.create_prim_func([A, B, C])


def row_sum(rows, cols):
    A = te.placeholder((rows, cols), name="A")
    r = te.reduce_axis((0, cols), "r")
    S = te.compute((rows,), lambda i: te.sum(A[i, r], axis=r), name="S")
    return te.create_prim_func([A, S])


def softmax(rows, cols):
    A = te.placeholder((rows, cols), name="A")
    r = te.reduce_axis((0, cols), "r")
    M = te.compute((rows,), lambda i: te.max(A[i, r], axis=r), name="M")
    E = te.compute((rows, cols), lambda i, j: te.exp(A[i, j] - M[i]), name="E")
    r2 = te.reduce_axis((0, cols), "r2")
    S = te.compute((rows,), lambda i: te.sum(E[i, r2], axis=r2), name="S")
    O = te.compute((rows, cols), lambda i, j: E[i, j] / S[i], name="O")  # noqa: E741
    return te.create_prim_func([A, O])


def elementwise(rows, cols):
    A = te.placeholder((rows, cols), name="A")
    B = te.compute((rows, cols), lambda i, j: A[i, j] * 2.0 + 1.0, name="B")
    return te.create_prim_func([A, B])


# (function, the rule that takes it on opencl)
KERNELS = {
    "Matmul": lambda: matmul(96, 80, 48),
    "GEMV": lambda: matmul(1, 96, 64, transposed=True),
    "LowBatchGEMV": lambda: matmul(4, 96, 64, transposed=True),
    "Reduction": lambda: row_sum(24, 300),
    "GeneralReduction": lambda: softmax(8, 100),
    "Fallback": lambda: elementwise(20, 33),
}


@pytest.mark.parametrize("rule", sorted(KERNELS))
def test_each_gpu_rule_samples_its_decisions_and_its_default_is_unchanged(rule, monkeypatch):
    func = KERNELS[rule]()
    assert rule_of(func, "opencl") == rule
    sampled = sample_schedule(func, "opencl", DefaultSampler())
    assert sampled.trace.decisions(), f"{rule} asks the sampler for no decision"
    # "without the sampler": every decision point takes the rule's own choice, no instruction
    monkeypatch.setattr(decisions, "_choose", lambda sch, candidates, default: default)
    plain = sample_schedule(func, "opencl", DefaultSampler())
    assert not plain.trace.decisions()
    assert scheduled_func(sampled).script() == scheduled_func(plain).script()
    assert structural_equal(scheduled_func(sampled), scheduled_func(plain))


@pytest.mark.parametrize("target", ["opencl", "cuda", "opencl -max_num_threads=64",
                                    "opencl -max_shared_memory_per_block=4096"])
def test_no_candidate_is_over_the_targets_limits(target):
    target = Target(target)
    for n in range(12):
        sch = sample_schedule(matmul(128, 128, 64), target, RandomSampler(n))
        func = scheduled_func(sch)
        extents = {}

        def visit(stmt):
            from graphc.tir.stmt import For, ForKind

            if isinstance(stmt, For) and stmt.kind == ForKind.THREAD_BINDING:
                extents[stmt.thread_binding.thread_tag] = stmt.extent.value

        from graphc.tir.functor import post_order_visit

        post_order_visit(func.body, visit)
        threads = extents.get("threadIdx.x", 1) * extents.get("threadIdx.y", 1)
        assert threads <= target.max_num_threads and threads % target.thread_warp_size == 0
        taken = [inst.info.candidates[inst.decision] for inst in sch.trace.insts if inst.is_sample]
        if rule_of(matmul(128, 128, 64), target) != "Matmul":
            continue  # its 16 x 16 threads are over this target's limit: another rule takes it
        (ty, tx), (ti, tj), k_tile = taken[:3]  # the block, the register tile, the k tile
        assert decisions.matmul_shared_bytes(ty, tx, ti, tj, k_tile) <= target.max_shared_memory_per_block


def run_on_pocl(func, scheduled):
    """(CPU result of the unscheduled build, PoCL result of the scheduled one) of the last buffer."""
    dev = opencl_device()
    rng = np.random.default_rng(0)
    arrays = [rng.uniform(-1, 1, [int(d) for d in func.buffer_map[p].shape]).astype("float32")
              for p in func.params]
    cpu = graphc.build(IRModule({"main": func.with_attr("global_symbol", "main")}), target="llvm")
    host = [a.copy() for a in arrays]
    cpu["main"](*host)
    gpu = graphc.build(IRModule({"main": scheduled.with_attr("global_symbol", "main")}), target="opencl")
    tensors = [graphc.runtime.tensor(a, dev) for a in arrays]
    gpu["main"](*tensors)
    return host[-1], tensors[-1].numpy()


@settings(max_examples=8, deadline=None, derandomize=True)
@given(rule=st.sampled_from(sorted(KERNELS)), seed=st.integers(0, 1 << 20))
def test_sampled_variants_of_each_gpu_rule_match_the_unscheduled_cpu_build(rule, seed):
    opencl_device()
    func = KERNELS[rule]()
    sch = sample_schedule(func, "opencl", RandomSampler(seed))
    cpu, dev = run_on_pocl(func, scheduled_func(sch))
    np.testing.assert_allclose(dev, cpu, rtol=1e-4, atol=1e-4)


@settings(max_examples=4, deadline=None, derandomize=True)
@given(m=st.integers(17, 90), n=st.integers(17, 90), k=st.integers(3, 70), seed=st.integers(0, 1 << 20))
def test_sampled_matmul_tiles_match_the_cpu_on_odd_shapes(m, n, k, seed):
    opencl_device()
    func = matmul(m, n, k)
    assert rule_of(func, "opencl") == "Matmul"
    # on shapes the tiles do not divide, some decisions are refused by the schedule primitives
    # (a ScheduleError: a failed sample, never built or measured); the first that schedules
    for n in range(seed, seed + 20):
        try:
            sch = sample_schedule(func, "opencl", RandomSampler(n))
            break
        except ScheduleError:
            continue
    else:
        pytest.fail("20 random samples of the matmul's space in a row were refused")
    cpu, dev = run_on_pocl(func, scheduled_func(sch))
    np.testing.assert_allclose(dev, cpu, rtol=1e-4, atol=1e-4)


def test_tensor_core_decisions_stay_within_the_shape_and_limits():
    from graphc.dlight.gpu.matmul import Matmul, MatmulConfig

    A = te.placeholder((128, 64), "float16", name="A")
    B = te.placeholder((64, 128), "float16", name="B")
    r = te.reduce_axis((0, 64), "r")
    C = te.compute((128, 128), lambda i, j: te.sum(A[i, r].astype("float32") * B[r, j].astype("float32"),
                                                     axis=r), name="C")
    func = te.create_prim_func([A, B, C])
    from graphc.tir.schedule import use_sampler

    rule = Matmul(MatmulConfig(tensor_cores="always"))
    with use_sampler(DefaultSampler()):
        default = rule.apply(func, Target("cuda"), False)
    (inst,) = [i for i in default.trace.insts if i.is_sample][:1]
    for combo in inst.info.candidates:
        wi, wj, fi, fj, k = combo
        assert 32 * wi * wj <= 1024 and 64 % k == 0
        assert 128 % (wi * fi * 16) == 0 and 128 % (wj * fj * 16) == 0
    assert inst.info.candidates[inst.decision] == [2, 2, 1, 1, 16]  # the rule's own choice


@pytest.fixture(scope="module")
def tuned_opencl(tmp_path_factory):
    if not graphc.opencl(0).exist:
        pytest.skip("no OpenCL platform (install PoCL: apt-get install pocl-opencl-icd)")
    pytest.importorskip("sklearn")
    mod = from_source(SOURCE)
    path = tmp_path_factory.mktemp("tune-gpu") / "records.json"
    db = graphc.tune(mod, "opencl", trials=4, records=path, progress=False, batch=4, confirm=1)
    return mod, path, db


def test_a_matmul_tuned_for_opencl_improves_or_equals_the_default_and_compile_applies_it(tuned_opencl):
    mod, path, db = tuned_opencl
    (task,) = extract_tasks(mod, "opencl")
    key = target_key("opencl")
    assert key.startswith("opencl -device=")
    best, default = db.best(task.workload, key), db.default_record(task.workload, key)
    assert best is not None and default is not None and db.relative(best, default) <= 1.0
    assert db.trials(task.workload, key) == 5  # four candidates and the default
    scheduled = graphc.driver.compile_to(mod, "scheduled", "opencl", tuning_records=str(path))
    kernels = [f for _, f in scheduled.items() if isinstance(f, PrimFunc) and "matmul" in f.script()]
    assert kernels and all(f.attrs["dlight.rule"] == f"tuned:{best.rule}" for f in kernels)
    assert structural_equal(kernels[0].body, replay(task.func, best, "opencl").body)
    exe = graphc.compile(mod, "opencl", tuning_records=str(path))
    dev = graphc.opencl(0)
    vm = graphc.relax.VirtualMachine(exe, dev)
    x, w = np.random.rand(64, 64).astype("float32"), np.random.rand(64, 64).astype("float32")
    out = vm["main"](graphc.runtime.tensor(x, dev), graphc.runtime.tensor(w, dev)).numpy()
    np.testing.assert_allclose(out, x @ w, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("other", ["llvm", "cuda"])
def test_opencl_records_are_not_applied_to_other_targets_and_the_reverse(tuned_opencl, tmp_path, other):
    mod, path, _ = tuned_opencl
    with pytest.warns(TuningRecordWarning, match="are for target 'opencl"):
        scheduled = graphc.driver.compile_to(mod, "scheduled", other, tuning_records=str(path))
    assert not any(str(f.attrs.get("dlight.rule", "")).startswith("tuned:")
                   for _, f in scheduled.items() if isinstance(f, PrimFunc))
    # and records of another device (or the CPU) are not applied to opencl
    foreign = tmp_path / "foreign.json"
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    foreign.write_text("".join(json.dumps({**r, "target": target_key(other)}) + "\n" for r in lines))
    with pytest.warns(TuningRecordWarning, match="ignored"):
        scheduled = graphc.driver.compile_to(mod, "scheduled", "opencl", tuning_records=str(foreign))
    assert not any(str(f.attrs.get("dlight.rule", "")).startswith("tuned:")
                   for _, f in scheduled.items() if isinstance(f, PrimFunc))


def test_tuning_for_cuda_without_a_device_says_so_before_any_work(monkeypatch, tmp_path):
    if graphc.cuda(0).exist:
        pytest.skip("a CUDA device is visible here")
    path = tmp_path / "records.json"
    with pytest.raises(GraphcError, match="no CUDA device is visible.*cannot be measured"):
        graphc.tune(matmul(32, 32, 32), "cuda", trials=2, records=path, progress=False)
    assert not path.exists()


def test_gpu_records_are_keyed_by_architecture():
    assert target_key("cuda -arch=sm_90") != target_key("cuda -arch=sm_80")
    db = Database()
    func = matmul(16, 16, 16)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert db.best(workload_key(func), "cuda -arch=sm_90") is None


def test_the_cost_model_sees_the_thread_blocks_and_shared_memory():
    from graphc.tune.cost_model import FEATURE_NAMES, features

    names = {name: k for k, name in enumerate(FEATURE_NAMES)}
    f = features(scheduled_func(sample_schedule(matmul(128, 80, 96), "opencl")))
    # 16 x 16 threads, (128 / 32) x (80 / 32 -> 3) blocks, 4 * 16 * (32 + 32) bytes of shared tiles
    assert f[names["log2_threads_per_block"]] == 8.0 and f[names["log2_thread_blocks"]] == np.log2(12)
    assert f[names["log2_shared_alloc_bytes"]] == 12.0
    cpu = features(matmul(128, 80, 96))
    assert cpu[names["log2_threads_per_block"]] == cpu[names["log2_thread_blocks"]] == 0.0


@settings(max_examples=3, deadline=None, derandomize=True)
@given(seed=st.integers(0, 1 << 20), trans_b=st.booleans())
def test_sampled_tensor_core_variants_match_the_cpu_on_pocl(seed, trans_b):
    # OpenCL emulates the WMMA intrinsics when the rule is told to use them ("always")
    from graphc.dlight.gpu.matmul import Matmul, MatmulConfig
    from graphc.tir.schedule import use_sampler

    dev = opencl_device()
    m, n, k = 64, 96, 64
    A = te.placeholder((m, k), "float16", name="A")
    B = te.placeholder((n, k) if trans_b else (k, n), "float16", name="B")
    r = te.reduce_axis((0, k), "r")
    C = te.compute((m, n), lambda i, j: te.sum(A[i, r] * (B[j, r] if trans_b else B[r, j]), axis=r), name="C")
    func = te.create_prim_func([A, B, C])
    with use_sampler(RandomSampler(seed)):
        sch = Matmul(MatmulConfig(tensor_cores="always")).apply(func, Target("opencl"), False)
    scheduled = sch.mod[sch.func_name]
    assert "tir.wmma_mma" in scheduled.script()
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (m, k)).astype("float16")
    b = rng.uniform(-1, 1, (n, k) if trans_b else (k, n)).astype("float16")
    lib = graphc.build(IRModule({"main": scheduled.with_attr("global_symbol", "main")}), target="opencl")
    tensors = [graphc.runtime.tensor(x, dev) for x in (a, b, np.zeros((m, n), "float16"))]
    lib["main"](*tensors)
    want = a.astype("float32") @ (b.T if trans_b else b).astype("float32")
    np.testing.assert_allclose(tensors[2].numpy().astype("float32"), want, rtol=5e-3, atol=5e-3)
