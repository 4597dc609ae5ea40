"""The ends of the valid range, one past them and far past them, for the Relax indexing
operators whose every mode and reduction the torch models do not reach (ONNX's GatherND,
ScatterND and ScatterElements build on them), run as a program: `test_index_edges.py`
starts it in a subprocess, so that a crash fails the test instead of killing the test session.

Each case compiles one call once and feeds it index values lo, hi - 1 (valid), lo - 1, hi,
lo - 10**9, hi + 10**9 (not), then lo again. A valid call must match the numpy reference; an
invalid one must raise IndexError naming the value, the indices' input, the valid range and
the Relax call. It prints `NAME: ok` per case and exits with status 0 when every case holds.
"""

import sys

import numpy as np

import graphc
from graphc import relax

R = relax
FAR = 10**9
RNG = np.random.default_rng(0)
X = RNG.uniform(0.5, 2.0, (4, 3, 2)).astype("float32")
COMBINE = {"update": lambda a, b: b, "add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum}


def compile_op(make, sinfos):
    params = [R.Var(f"a{i}", s) for i, s in enumerate(sinfos)]
    bb = R.BlockBuilder()
    with bb.function("main", params):
        with bb.dataflow():
            out = bb.emit_output(make(*params))
        bb.emit_func_output(out)
    return R.VirtualMachine(graphc.compile(bb.get()), graphc.cpu())["main"]


def tensor(shape, dtype="float32"):
    return R.TensorStructInfo(shape, dtype)


def values(lo, hi):
    return [lo, hi - 1, lo - 1, hi, lo - FAR, hi + FAR, lo]


def run_case(name, fn, args_for, reference, lo, hi, op_name):
    """Call `fn(*args_for(v))` for each value v of `values(lo, hi)` and check the outcome."""
    for v in values(lo, hi):
        args = args_for(v)
        try:
            got = fn(*args)
        except IndexError as err:
            message = str(err)
            assert not lo <= v < hi, f"{name}: IndexError on the valid index {v}: {message}"
            for part in (f"index {v} in a1 ", f"is out of range [{lo}, {hi})", f"R.{op_name}("):
                assert part in message, f"{name}, index {v}: {part!r} not in {message!r}"
            continue
        assert lo <= v < hi, f"{name}: no IndexError for the index {v}"
        np.testing.assert_allclose(got.numpy(), reference(*args), rtol=1e-6, err_msg=f"{name}, index {v}")
    print(f"{name}: ok", flush=True)


def wrap(indices, dims):
    return np.where(indices < 0, indices + dims, indices)


def gather_nd(mode):
    lo = -4 if mode == "raise" else 0
    sinfos = [tensor((4, 3, 2)), tensor((3, 2), "int64")]
    fn = compile_op(lambda x, i: R.op.gather_nd(x, i, mode=mode), sinfos)

    def args_for(v):  # the first axis's position of the second row is varied
        return X, np.array([[0, 2], [v, 1], [3, -1 if mode == "raise" else 0]], dtype="int64")

    def reference(x, idx):
        return np.stack([x[tuple(wrap(row, np.array(x.shape[:2])))] for row in idx])

    run_case(f"gather_nd[{mode}]", fn, args_for, reference, lo, 4, "gather_nd")


def scatter_nd(reduction, mode):
    lo = -3 if mode == "raise" else 0
    sinfos = [tensor((4, 3, 2)), tensor((3, 2), "int64"), tensor((3, 2))]
    fn = compile_op(lambda x, i, u: R.op.scatter_nd(x, i, u, reduction, mode=mode), sinfos)
    upd = RNG.uniform(0.5, 2.0, (3, 2)).astype("float32")

    def args_for(v):  # the second axis's position of the first row is varied
        return X, np.array([[1, v], [2, 0], [1, 1]], dtype="int64"), upd

    def reference(x, idx, u):
        out = x.copy()
        for p, row in enumerate(idx):
            at = tuple(wrap(row, np.array(x.shape[:2])))
            out[at] = COMBINE[reduction](out[at], u[p])
        return out

    run_case(f"scatter_nd[{reduction}, {mode}]", fn, args_for, reference, lo, 3, "scatter_nd")


def scatter_elements(reduction, mode):
    lo = -4 if mode == "raise" else 0
    x = X.reshape(4, 6)
    sinfos = [tensor((4, 6)), tensor((2, 6), "int64"), tensor((2, 6))]
    fn = compile_op(lambda a, i, u: R.op.scatter_elements(a, i, u, 0, reduction, mode=mode), sinfos)
    upd = RNG.uniform(0.5, 2.0, (2, 6)).astype("float32")

    def args_for(v):
        idx = np.array([[0, 1, 2, 3, 0, 1], [3, 2, 1, 0, 3, 2]], dtype="int64")
        idx[1, 4] = v
        return x, idx, upd

    def reference(a, idx, u):
        out = a.copy()
        hits = {}
        for pos in np.ndindex(idx.shape):
            at = (int(wrap(idx[pos], 4)), pos[1])
            if reduction == "mean":
                hits.setdefault(at, [a[at]]).append(u[pos])
            else:
                out[at] = COMBINE[reduction](out[at], u[pos])
        for at, seen in hits.items():
            out[at] = np.float32(np.mean(np.array(seen, dtype="float32")))
        return out

    run_case(f"scatter_elements[{reduction}, {mode}]", fn, args_for, reference, lo, 4, "scatter_elements")


CASES = [
    *(lambda mode=mode: gather_nd(mode) for mode in ("raise", "nonnegative")),
    *(lambda red=red, mode=mode: scatter_nd(red, mode)
      for red in ("update", "add", "mul", "max", "min") for mode in ("raise", "nonnegative")),
    *(lambda red=red: scatter_elements(red, "raise") for red in ("mul", "mean", "max", "min")),
]


if __name__ == "__main__":
    for case in CASES:
        case()
    sys.exit(0)
