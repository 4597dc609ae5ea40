"""Argument checking of compiled kernels: every wrong argument is a clear error, never a crash."""

import numpy as np
import pytest
import torch

import graphc.runtime as rt
from graphc import IRModule, tir
from graphc.runtime.kernel import KernelArgumentCountError, KernelArgumentError
from graphc.target import Target
from graphc.target.llvm import build_llvm


@pytest.fixture(autouse=True)
def isolated_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("GRAPHC_CACHE_DIR", str(tmp_path / "cache"))


def _build(func, name="scale"):
    return build_llvm(IRModule({name: func.with_attr("global_symbol", name)}), Target("llvm"))[name]


@pytest.fixture(scope="module")
def scale(tmp_path_factory):
    """scale(A: (n, 4) float32, B: (n, 4) float32 written, C: (n*2,) int32 written, k: int32)."""
    n = tir.Var("n")
    A, B = tir.decl_buffer((n, 4), "float32", "A"), tir.decl_buffer((n, 4), "float32", "B")
    C = tir.decl_buffer((n * 2,), "int32", "C")
    Af = tir.decl_buffer((n * 4,), "float32", "Af", data=A.data)
    Bf = tir.decl_buffer((n * 4,), "float32", "Bf", data=B.data)
    k, i = tir.Var("k"), tir.Var("i")
    a, b, c = tir.Var("a", "handle"), tir.Var("b", "handle"), tir.Var("c", "handle")
    body = tir.SeqStmt((
        tir.For(i, tir.const(0), n * 4, tir.ForKind.SERIAL, tir.BufferStore(Bf, Af[i] * 2.0, (i,))),
        tir.For(i, tir.const(0), n * 2, tir.ForKind.SERIAL, tir.BufferStore(C, i + k, (i,))),
    ))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("GRAPHC_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
        return _build(tir.PrimFunc([a, b, c, k], body, buffer_map={a: A, b: B, c: C}))


def _args(n=3):
    return np.ones((n, 4), "float32"), np.zeros((n, 4), "float32"), np.zeros(n * 2, "int32"), 10


def test_valid_call(scale):
    a, b, c, k = _args()
    scale(a, b, c, k)
    np.testing.assert_array_equal(b, 2 * a)
    np.testing.assert_array_equal(c, np.arange(6) + 10)


def _expect(scale, args, *words, error=KernelArgumentError):
    with pytest.raises(error) as info:
        scale(*args)
    for word in ("scale", *words):
        assert word in str(info.value), str(info.value)


def test_wrong_count(scale):
    _expect(scale, _args()[:3], "takes 4 arguments", "got 3", error=KernelArgumentCountError)
    with pytest.raises(TypeError):
        scale()


def test_wrong_dtype(scale):
    a, b, c, k = _args()
    _expect(scale, (a.astype("float64"), b, c, k), "#0 (A)", "dtype", "float32", "float64")


def test_wrong_rank(scale):
    a, b, c, k = _args()
    _expect(scale, (a.reshape(-1), b, c, k), "(A)", "rank", "expected 2")


def test_wrong_static_dim(scale):
    a, b, c, k = _args()
    _expect(scale, (np.ones((3, 5), "float32"), b, c, k), "(A)", "dimension 1", "expected 4", "got 5")


def test_inconsistent_symbolic_dim(scale):
    a, b, c, k = _args()
    _expect(scale, (a, np.zeros((2, 4), "float32"), c, k), "#1 (B)", "dimension 0", "n = 3", "got 2")


def test_compound_dim_checked(scale):
    a, b, c, k = _args()
    _expect(scale, (a, b, np.zeros(5, "int32"), k), "(C)", "dimension 0", "(n * 2) = 6", "got 5")


def test_non_contiguous(scale):
    a, b, c, k = _args()
    wide = np.ones((3, 8), "float32")
    _expect(scale, (wide[:, ::2], b, c, k), "(A)", "C-contiguous")


def test_read_only_output(scale):
    a, b, c, k = _args()
    b.setflags(write=False)
    _expect(scale, (a, b, c, k), "(B)", "writeable")
    a.setflags(write=False)  # a read-only input is fine
    b2 = np.zeros((3, 4), "float32")
    scale(a, b2, c, k)
    np.testing.assert_array_equal(b2, 2 * a)


def test_scalar_checks(scale):
    a, b, c, _ = _args()
    _expect(scale, (a, b, c, 1.5), "(k)", "an integer")
    _expect(scale, (a, b, c, 2**40), "(k)", "fits int32")
    _expect(scale, (a, b, c, "x"), "(k)", "an integer")


def test_unsupported_argument_type(scale):
    a, b, c, k = _args()
    _expect(scale, ([1.0] * 12, b, c, k), "(A)", "numpy array")


def test_device_must_be_cpu(scale):
    a, b, c, k = _args()
    _expect(scale, (torch.empty((3, 4), device="meta"), b, c, k), "(A)", "device", "cpu", "meta")


def _misaligned(shape, dtype):
    raw = np.zeros(int(np.prod(shape)) * np.dtype(dtype).itemsize + 64 + 4, np.uint8)
    start = (-raw.ctypes.data) % 64 + 4  # 4 bytes past a 64-byte boundary
    arr = raw[start:start + int(np.prod(shape)) * np.dtype(dtype).itemsize].view(dtype).reshape(shape)
    assert arr.ctypes.data % 64 == 4
    return arr


def test_misaligned_numpy_is_copied_and_written_back(scale):
    a = _misaligned((3, 4), "float32")
    a[...] = np.arange(12).reshape(3, 4)
    b, c = _misaligned((3, 4), "float32"), _misaligned((6,), "int32")
    scale(a, b, c, 1)
    np.testing.assert_array_equal(b, 2 * a)
    np.testing.assert_array_equal(c, np.arange(6) + 1)


def test_graphc_tensors_and_torch_tensors(scale):
    a = rt.tensor(np.full((2, 4), 3.0, "float32"))
    b = rt.empty((2, 4), "float32")
    c = torch.zeros(4, dtype=torch.int32)
    scale(a, b, c, 5)
    np.testing.assert_array_equal(b.numpy(), np.full((2, 4), 6.0))
    assert c.tolist() == [5, 6, 7, 8]
    with pytest.raises(KernelArgumentError, match="C-contiguous"):
        scale(torch.ones((4, 2)).t(), torch.zeros((2, 4)), torch.zeros(4, dtype=torch.int32), 0)


def test_zero_sized_arguments(scale):
    a, b, c, k = _args(0)
    scale(a, b, c, k)


def test_scalar_bound_shape_var_consistency():
    n = tir.Var("n")
    A = tir.decl_buffer((n,), "int32", "A")
    a, i = tir.Var("a", "handle"), tir.Var("i")
    body = tir.For(i, tir.const(0), n, tir.ForKind.SERIAL, tir.BufferStore(A, i, (i,)))
    fill = _build(tir.PrimFunc([a, n], body, buffer_map={a: A}), "fill")
    x = np.zeros(5, "int32")
    fill(x, 5)
    np.testing.assert_array_equal(x, np.arange(5))
    with pytest.raises(KernelArgumentError, match="n = 5"):
        fill(x, 7)  # would write past the end of x


def test_declared_strides_are_checked():
    n, s = tir.Var("n"), tir.Var("s")
    A = tir.decl_buffer((n,), "float32", "A", strides=(s,))
    a, i = tir.Var("a", "handle"), tir.Var("i")
    Af = tir.decl_buffer((n * s,), "float32", "Af", data=A.data)
    body = tir.For(i, tir.const(0), n, tir.ForKind.SERIAL, tir.BufferStore(Af, Af[i * s] + 1.0, (i * s,)))
    inc = _build(tir.PrimFunc([a], body, buffer_map={a: A}), "inc")
    base = np.zeros(12, "float32")
    inc(base[::3])
    np.testing.assert_array_equal(base, np.tile([1, 0, 0], 4))
    inc(base[:4])
    np.testing.assert_array_equal(base[:4], [2, 1, 1, 2])
    shifted = _misaligned((12,), "float32")
    shifted[...] = 0
    inc(shifted[::4])  # misaligned and strided: copied with its strides, then written back
    np.testing.assert_array_equal(shifted, np.tile([1, 0, 0, 0], 3))


class _DLPackOnly:
    """A foreign tensor type that only speaks DLPack."""

    def __init__(self, array):
        self._array = array

    def __dlpack__(self, **kwargs):
        return self._array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._array.__dlpack_device__()


def test_dlpack_capable_objects(scale):
    a = _DLPackOnly(np.full((2, 4), 2.0, "float32"))
    b = np.zeros((2, 4), "float32")
    c = _DLPackOnly(np.zeros(4, "int32"))
    scale(a, b, c, 1)
    np.testing.assert_array_equal(b, np.full((2, 4), 4.0))
    np.testing.assert_array_equal(c._array, [1, 2, 3, 4])


def test_static_dims_checked_on_aligned_arguments(scale):
    # graphc tensors are always aligned, so this goes through the fast path
    a = rt.tensor(np.ones((3, 5), "float32"))
    b = rt.empty((3, 4), "float32")
    with pytest.raises(KernelArgumentError, match="dimension 1"):
        scale(a, b, np.zeros(6, "int32"), 0)
