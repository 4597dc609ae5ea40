"""Compile-time shortcuts that must not change what is compiled: each is compared, on small
models, with the slow way it replaces (the kernels' script and structural hash, and every
constant of the module bit for bit)."""

import numpy as np
import pytest
import torch

from graphc import compile_gc, driver
from graphc.frontend.torch import from_exported_program
from graphc.ir import structural_hash
from graphc.relax import expr as rx
from graphc.relax.expr_functor import ExprVisitor
from graphc.relax.transform import fold_constant
from graphc.tir import PrimFunc, Range, Var
from graphc.tir.arith import Analyzer
from graphc.tir.arith.keys import expr_text
from graphc.tir.schedule import bounds, scope


class _Net(torch.nn.Module):
    """Convolutions with batch norm (folded into the weights at compile time), a strided and a
    grouped one, concatenation (DenseNet's pattern) and a linear layer (its weight packed)."""

    def __init__(self):
        super().__init__()
        self.a = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.bn_a = torch.nn.BatchNorm2d(8)
        self.b = torch.nn.Conv2d(8, 8, 3, padding=1, stride=2, groups=2)
        self.bn_b = torch.nn.BatchNorm2d(16)
        self.c = torch.nn.Conv2d(16, 12, 1)
        self.fc = torch.nn.Linear(12, 7)

    def forward(self, x):
        y = torch.relu(self.bn_a(self.a(x)))
        z = torch.nn.functional.avg_pool2d(y, 2)
        y = torch.cat([self.b(y), z], dim=1)
        y = torch.relu(self.bn_b(y))
        return self.fc(self.c(y).mean(dim=(2, 3)))


def _module():
    torch.manual_seed(0)
    net = _Net().eval()
    with torch.no_grad():
        for bn in (net.bn_a, net.bn_b):  # statistics that make the folding do arithmetic
            bn.running_mean.uniform_(-1, 1)
            bn.running_var.uniform_(0.5, 2)
            bn.weight.uniform_(0.5, 1.5)
            bn.bias.uniform_(-1, 1)
        return from_exported_program(torch.export.export(net, (torch.randn(1, 3, 12, 12),)))


def _constants(mod) -> list:
    found = []

    class Find(ExprVisitor):
        def visit_Constant(self, const):  # noqa: N802 - the visitor's naming
            found.append(const.data.numpy())

    for _, func in mod.items():
        if isinstance(func, rx.Function):
            Find().visit_expr(func)
    return found


def _scheduled(mod):
    return driver.compile_to(mod, "scheduled")


def _assert_same(a, b):
    kernels_a = {gv.name_hint: f for gv, f in a.items() if isinstance(f, PrimFunc)}
    kernels_b = {gv.name_hint: f for gv, f in b.items() if isinstance(f, PrimFunc)}
    assert list(kernels_a) == list(kernels_b)
    for name, func in kernels_a.items():
        assert func.script() == kernels_b[name].script(), name
        assert structural_hash(func) == structural_hash(kernels_b[name]), name
    consts_a, consts_b = _constants(a), _constants(b)
    assert len(consts_a) == len(consts_b) > 0
    for x, y in zip(consts_a, consts_b):
        assert x.dtype == y.dtype and x.shape == y.shape
        assert x.tobytes() == y.tobytes()


@pytest.fixture
def uncached(monkeypatch):
    monkeypatch.setenv("GRAPHC_CACHE", "0")


def test_fold_kernels_at_low_opt_level_give_the_same_bits(monkeypatch, uncached):
    """FoldConstant builds its kernels at `_FOLD_OPT_LEVEL`; LLVM's O3 gives the same bits."""
    mod = _module()
    fast = _scheduled(mod)
    monkeypatch.setattr(fold_constant, "_FOLD_OPT_LEVEL", 3)
    _assert_same(fast, _scheduled(mod))


def test_bounds_relaxed_together_schedule_the_same(monkeypatch, uncached):
    """The stage-pipeline checks relax a region's ends with the loops bound once
    (`relax_all_in`); relaxing each end on its own schedules the same kernels."""
    mod = _module()
    fast = _scheduled(mod)
    monkeypatch.setattr(scope, "relax_all_in",
                        lambda ana, exprs, dom: [bounds.relax_in(ana, e, dom) for e in exprs])
    _assert_same(fast, _scheduled(mod))


def test_int_sets_are_each_int_set():
    i, j, k, n = Var("i"), Var("j"), Var("k"), Var("n")
    exprs = [i, j * 4 + i, (i * 3 + j) // 2, k - j * 7 + 5, (j + n) % 4, i * j, n * 0 + 9]
    dom = {i: Range(0, 5), j: Range(2, 6), k: Range(n, 3)}
    ana = Analyzer()
    together = ana.int_sets(exprs, dom)
    for expr, got in zip(exprs, together):
        want = Analyzer().int_set(expr, dom)
        for a, b in ((got.min_value, want.min_value), (got.max_value, want.max_value)):
            assert (a is None) == (b is None)
            if a is not None:
                assert expr_text(a) == expr_text(b), expr
    assert [s.min_value for s in ana.int_sets([], dom)] == []
    np.testing.assert_equal(len(ana.int_sets(exprs, {})), len(exprs))


def test_fewer_collections_compile_the_same(monkeypatch, uncached):
    """`graphc.compile` collects garbage less often (`driver.fewer_collections`); with the
    collector at its defaults the same kernels and constants come out."""
    import contextlib

    mod = _module()
    fast = _scheduled(mod)
    monkeypatch.setattr(driver, "fewer_collections", contextlib.nullcontext)
    _assert_same(fast, _scheduled(mod))


def test_fewer_collections_puts_the_collector_back(uncached):
    import gc

    seen = []

    def progress(message, done, total):
        seen.append((gc.get_threshold(), gc.get_freeze_count() > 0))

    before, frozen = gc.get_threshold(), gc.get_freeze_count()
    driver.compile(_module(), progress=progress)
    assert seen and all(state == (compile_gc._GC_THRESHOLD, True) for state in seen)
    assert (gc.get_threshold(), gc.get_freeze_count()) == (before, frozen)
    with driver.fewer_collections():  # nested: the outer one puts it back
        with driver.fewer_collections():
            pass
        assert gc.get_threshold() == compile_gc._GC_THRESHOLD
    assert (gc.get_threshold(), gc.get_freeze_count()) == (before, frozen)
    gc.disable()  # the program's choice: left alone
    try:
        with driver.fewer_collections():
            assert not gc.isenabled() and gc.get_threshold() == before and gc.get_freeze_count() == frozen
    finally:
        gc.enable()
    with pytest.raises(ZeroDivisionError):  # an error in the compile puts it back too
        with driver.fewer_collections():
            1 / 0  # noqa: B018
    assert (gc.get_threshold(), gc.get_freeze_count()) == (before, frozen)


def test_ir_generated_by_the_lowering_children_is_the_builds(monkeypatch, uncached):
    """The children lowering kernels generate their LLVM IR too (`remember_ir`); the build
    takes it, and it is the IR the build would have generated itself."""
    from graphc.ir.transform import _GLOBAL_INSTRUMENTS
    from graphc.target.llvm import build as llvm_build

    saved = list(_GLOBAL_INSTRUMENTS)  # the suite's round-trip check keeps kernels in one process
    _GLOBAL_INSTRUMENTS.clear()
    try:
        monkeypatch.setenv("GRAPHC_COMPILE_JOBS", "2")
        monkeypatch.setattr(driver, "PARALLEL_MIN_KERNELS", 2)
        monkeypatch.setattr(llvm_build, "PARALLEL_MIN_CHARS", 0)
        texts, taken = [], []
        original_many, original_ahead = llvm_build.compile_many, llvm_build._ahead_of_time
        monkeypatch.setattr(llvm_build, "compile_many", lambda parts, target: texts.append(parts)
                            or original_many(parts, target))
        monkeypatch.setattr(llvm_build, "_ahead_of_time",
                            lambda *a: taken.append(original_ahead(*a)) or taken[-1])
        mod = _module()
        driver.compile(mod)
        assert any(t is not None for t in taken), "no kernel's IR came from a child"
        assert not llvm_build._AHEAD  # dropped after the compile
        monkeypatch.setattr(driver, "_make_ahead", lambda make, results, kernels: {})
        driver.compile(mod)
    finally:
        _GLOBAL_INSTRUMENTS[:] = saved
    assert len(texts) == 2 and texts[0] == texts[1]
