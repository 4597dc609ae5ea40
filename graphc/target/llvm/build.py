"""From an IRModule of lowered PrimFuncs to a loaded runtime Module, through the object cache.

Code generation always runs (it is cheap and gives the cache key); LLVM's O3 pipeline and
machine-code emission run only on a cache miss.

>>> from graphc import tir
>>> from graphc.target import Target
>>> A = tir.decl_buffer((4,), "float32", "A")
>>> a = tir.Var("a", "handle")
>>> i = tir.Var("i")
>>> body = tir.For(i, tir.const(0), tir.const(4), tir.ForKind.SERIAL, tir.BufferStore(A, A[i] + 1.0, (i,)))
>>> from graphc import IRModule
>>> lib = build_llvm(IRModule({"inc": tir.PrimFunc([a], body, buffer_map={a: A})}), Target("llvm"))
>>> import numpy as np; x = np.zeros(4, "float32"); lib["inc"](x); x
array([1., 1., 1., 1.], dtype=float32)
"""

from __future__ import annotations

import os

from ...errors import CodegenError
from ...runtime.module import Module
from .. import cache
from . import object_compiler
from .codegen import codegen_module
from .init import create_target_machine, ensure_llvm
from .object_compiler import optimize

# LLVM's cost model on AMD Zen (and some Intel parts) happily vectorizes a loop that strides
# through rows with gathers and scatters, which run far slower than the scalar loop they
# replace (a blocked matmul became 20x slower). graphc vectorizes the loops a schedule marks
# itself, so steer LLVM's own vectorizer away from gathers unless the target asks otherwise.
_X86_TUNING = ("+prefer-no-gather", "+prefer-no-scatter")


def machine_features(target) -> str:
    """The feature string handed to LLVM: the target's, plus x86 tuning it does not override."""
    features = list(target.mattr)
    if target.triple.startswith(("x86_64", "i686", "i386")):
        named = {f[1:] for f in features}
        features += [f for f in _X86_TUNING if f[1:] not in named]
    return ",".join(features)


def target_machine_for(target):
    return create_target_machine(target.triple, target.mcpu, machine_features(target), target.opt_level)


def compile_ir(ir_text: str, target) -> tuple[bytes, str]:
    """(object code, optimized IR text) for `ir_text`, from the cache when possible."""
    ensure_llvm()
    key = cache.cache_key(ir_text, target.resolved())
    hit = cache.load(key)
    if hit is not None:
        obj, info = hit
        return obj, info.get("ll", "")
    obj, ll = _compile_here(ir_text, target)
    cache.store(key, obj, {"ll": ll, "target": target.resolved()})
    return obj, ll


def build_llvm(mod, target) -> Module:
    """Compile every PrimFunc of the lowered `mod` for the CPU `target`.

    A large module is split into one part per core, each its own LLVM module and object file,
    compiled at once: this process compiles one part, worker processes the others
    (`object_compiler`), and each part has its own object-cache entry. Each kernel is then
    generated once, into its own LLVM module, and a part is the linked modules of its kernels.
    """
    info = {"triple": target.triple, "cpu": target.mcpu, "features": ",".join(target.mattr),
            "opt": target.opt_level, "str": str(target)}
    from ...tir.function import PrimFunc

    count = parallel_parts()
    funcs = [(gv, f) for gv, f in mod.items() if isinstance(f, PrimFunc)]
    if count > 1 and len(funcs) > 1:
        from ...ir.module import IRModule

        kernels = []  # (IR text, metadata) of each kernel, generated alone
        for gv, func in funcs:
            ahead = _ahead_of_time(gv, func, target)
            if ahead is None:
                llmod, metas = codegen_module(IRModule({gv: func}), target)
                ahead = str(llmod), metas[0]
            kernels.append(ahead)
        if sum(len(text) for text, _ in kernels) >= PARALLEL_MIN_CHARS:
            parts = _partition([len(text) for text, _ in kernels], count)
            results = compile_many([[kernels[i][0] for i in part] for part in parts], target)
            metas = [{**kernels[i][1], "object": index} for index, part in enumerate(parts) for i in part]
            return Module([obj for obj, _ in results], metas, info, [ll for _, ll in results])
    llmod, metas = codegen_module(mod, target)  # small enough for one part: one LLVM module
    obj, ll = compile_ir(str(llmod), target)
    return Module(obj, metas, info, ll)


# -- LLVM IR generated ahead of the build -------------------------------------------------------------

# (name, id of the body) -> (the kernel, its IR text, its metadata, the target's text)
_AHEAD: dict = {}


def kernel_ir(name: str, func, target) -> tuple[str, dict]:
    """The LLVM IR text and metadata of the lowered kernel `func` generated alone under `name`
    (its "global_symbol"), as `build_llvm` generates each kernel of a large module."""
    from ...ir.module import IRModule

    llmod, metas = codegen_module(IRModule({name: func.with_attr("global_symbol", name)}), target)
    return str(llmod), metas[0]


def remember_ir(name: str, func, text: str, meta: dict, target) -> None:
    """Keep `kernel_ir(name, func, target)`, generated elsewhere (`graphc.compile` has the
    children that lowered the kernels generate their IR too), for `build_llvm` to take
    instead of generating it again; `forget_ir` drops what was kept."""
    _AHEAD[(name, id(func.body))] = (func, text, meta, str(target))


def forget_ir() -> None:
    _AHEAD.clear()


def _ahead_of_time(gv, func, target) -> tuple[str, dict] | None:
    """The kept IR of the kernel `gv` names, if it was generated from this very kernel (its
    body, parameters and buffers the same objects, its attributes the same but for the
    "global_symbol" it is built under) for this target."""
    if not _AHEAD:
        return None
    name = func.attrs.get("global_symbol") or gv.name_hint
    hit = _AHEAD.get((name, id(func.body)))
    if hit is None:
        return None
    kept, text, meta, target_text = hit
    same = (kept.body is func.body and kept.ret_type is func.ret_type and target_text == str(target)
            and len(kept.params) == len(func.params) and all(a is b for a, b in zip(kept.params, func.params))
            and kept.buffer_map.keys() == func.buffer_map.keys()
            and all(kept.buffer_map[k] is func.buffer_map[k] for k in func.buffer_map)
            and set(kept.attrs) - {"global_symbol"} == set(func.attrs) - {"global_symbol"}
            and all(kept.attrs[k] is func.attrs[k] for k in func.attrs if k != "global_symbol"))
    return (text, meta) if same else None


# Modules whose LLVM IR is shorter than this compile in this process alone: starting a worker
# costs more than it saves.
PARALLEL_MIN_CHARS = 400_000


def parallel_parts() -> int:
    """How many parts a large module is compiled in: `GRAPHC_COMPILE_JOBS` (a count, or "auto"),
    by default one per core this process may use (1: no worker processes)."""
    setting = os.environ.get("GRAPHC_COMPILE_JOBS", "").strip()
    if setting.isdigit() and int(setting) > 0:
        return int(setting)
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return max(1, os.cpu_count() or 1)


def _partition(weights: list[int], count: int) -> list[list[int]]:
    """The indices of `weights` in at most `count` parts of about equal total weight (the
    heaviest first into the lightest part), each part in its original order.

    >>> _partition([5, 1, 4, 2], 2)
    [[0, 1], [2, 3]]
    """
    bins = [[0, []] for _ in range(max(1, min(count, len(weights))))]
    for i in sorted(range(len(weights)), key=lambda i: -weights[i]):
        lightest = min(bins, key=lambda b: b[0])
        lightest[0] += weights[i]
        lightest[1].append(i)
    return [sorted(items) for _, items in bins if items]


def compile_many(texts: list, target) -> list[tuple[bytes, str]]:
    """`compile_ir` of each text (or list of texts: LLVM modules linked into one), the cache
    misses spread over this process and worker processes."""
    ensure_llvm()
    resolved = target.resolved()
    keys = [cache.cache_key(text if isinstance(text, str) else "\n".join(text), resolved) for text in texts]
    results: list = [None] * len(texts)
    for i, key in enumerate(keys):
        hit = cache.load(key)
        if hit is not None:
            results[i] = (hit[0], hit[1].get("ll", ""))
    missing = [i for i, r in enumerate(results) if r is None]
    if not missing:
        return results
    request = (target.triple, target.mcpu, machine_features(target), target.opt_level)
    mine, theirs = missing[0], missing[1:]
    sent = []  # (worker, index) of the parts handed to a worker
    try:
        workers = object_compiler.POOL.ensure(len(theirs)) if theirs else []
        for worker, i in zip(workers, theirs):
            object_compiler.POOL.submit(worker, (texts[i], *request))
            sent.append((worker, i))
    except OSError:  # no worker could be started or reached: the rest is compiled here
        pass
    try:
        results[mine] = _compile_here(texts[mine], target)
    finally:
        for worker, i in sent:
            try:
                results[i] = object_compiler.POOL.result(worker)
            except RuntimeError as err:
                raise CodegenError(f"LLVM rejected the generated IR: {err}") from err
            except (EOFError, OSError):  # the worker died: compile it here
                results[i] = _compile_here(texts[i], target)
    for i in missing:
        if results[i] is None:
            results[i] = _compile_here(texts[i], target)
    for i in missing:
        cache.store(keys[i], results[i][0], {"ll": results[i][1], "target": resolved})
    return results


def _compile_here(text, target) -> tuple[bytes, str]:
    tm = target_machine_for(target)
    try:
        llmod = object_compiler.parse_linked(text)
        llmod.verify()
    except RuntimeError as err:
        raise CodegenError(f"LLVM rejected the generated IR: {err}") from err
    llmod.triple = tm.triple
    llmod.data_layout = str(tm.target_data)
    optimize(llmod, tm, target.opt_level)
    return tm.emit_object(llmod), str(llmod)

