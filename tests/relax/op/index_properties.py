"""Property checks of checked indices, run as a program (`test_index_properties.py` starts it
in a subprocess, so that a crash fails the test instead of killing the test session).

For take, gather_elements and scatter_elements, compiled once each, random index tensors,
some valid and some not, are fed to the VM: each call either matches numpy or raises
IndexError naming one of the offending values and the valid range. Exit status 0 when every
property holds; hypothesis prints the falsifying example otherwise.
"""

import sys

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import graphc
from graphc import relax

R = relax
RNG = np.random.default_rng(0)
# values near the ends of small axes, and far outside them (int32 limits, 10**9, int64 ranges)
VALUES = st.one_of(st.integers(-9, 9), st.sampled_from([2**31 - 1, -(2**31), 10**9, -(10**18), 2**62]))


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


def indices(shape):
    return st.lists(VALUES, min_size=int(np.prod(shape)), max_size=int(np.prod(shape))).map(
        lambda v: np.array(v, dtype="int64").reshape(shape))


def outcome(fn, reference, idx, lo, hi):
    """Check one call: numpy's answer for valid indices, IndexError naming a bad value else."""
    bad = [int(v) for v in idx.reshape(-1) if not lo <= v < hi]
    try:
        got = fn()
    except IndexError as err:
        assert bad, f"IndexError on valid indices {idx.tolist()}: {err}"
        message = str(err)
        assert f"is out of range [{lo}, {hi})" in message, message
        assert any(f"index {v} in " in message for v in bad), (bad, message)
        return
    assert not bad, f"no IndexError for the out-of-range indices {bad}"
    np.testing.assert_array_equal(got.numpy(), reference())


X = RNG.uniform(-1, 1, (6, 5)).astype("float32")
TAKE, SCATTER, BIG_TAKE, GATHER = {}, {}, [], []  # compiled by `compile_all`, when run as a program


def compile_all():
    for mode in ("raise", "nonnegative"):
        TAKE[mode] = compile_op(lambda x, i, mode=mode: R.op.take(x, i, axis=1, mode=mode),
                                [tensor((6, 5)), tensor((7,), "int64")])
    BIG_TAKE.append(compile_op(lambda x, i: R.op.take(x, i, axis=0),
                               [tensor((64, 32)), tensor((8192,), "int64")]))
    GATHER.append(compile_op(lambda x, i: R.op.gather_elements(x, i, axis=0),
                             [tensor((6, 5)), tensor((3, 5), "int64")]))
    for red in ("update", "add"):
        SCATTER[red] = compile_op(
            lambda x, i, u, red=red: R.op.scatter_elements(x, i, u, 0, red, mode="nonnegative"),
            [tensor((6, 5)), tensor((3, 5), "int64"), tensor((3, 5))])


SETTINGS = settings(max_examples=60, deadline=None, derandomize=True)


@SETTINGS
@given(idx=indices((7,)), mode=st.sampled_from(["raise", "nonnegative"]))
def take_matches_numpy_or_raises(idx, mode):
    lo = -5 if mode == "raise" else 0
    outcome(lambda: TAKE[mode](X, idx), lambda: np.take(X, idx, axis=1), idx, lo, 5)


@SETTINGS
@given(positions=st.lists(st.integers(0, 8191), min_size=1, max_size=4), value=VALUES)
def take_in_a_big_kernel_matches_numpy_or_raises(positions, value):
    x = np.arange(64 * 32, dtype="float32").reshape(64, 32)
    idx = (np.arange(8192) % 64).astype("int64")
    idx[positions] = value
    outcome(lambda: BIG_TAKE[0](x, idx), lambda: np.take(x, idx, axis=0), idx, -64, 64)


@SETTINGS
@given(idx=indices((3, 5)))
def gather_matches_numpy_or_raises(idx):
    outcome(lambda: GATHER[0](X, idx), lambda: np.take_along_axis(X, np.where(idx < 0, idx + 6, idx), 0),
            idx, -6, 6)


@SETTINGS
@given(idx=indices((3, 5)), reduction=st.sampled_from(["update", "add"]))
def scatter_matches_numpy_or_raises(idx, reduction):
    upd = np.arange(15, dtype="float32").reshape(3, 5) + 100

    def reference():
        out = X.copy()
        for pos in np.ndindex(idx.shape):  # row-major order: the last update wins
            at = (idx[pos], pos[1])
            out[at] = upd[pos] if reduction == "update" else out[at] + upd[pos]
        return out

    outcome(lambda: SCATTER[reduction](X, idx, upd), reference, idx, 0, 6)


if __name__ == "__main__":
    compile_all()
    for check in (take_matches_numpy_or_raises, take_in_a_big_kernel_matches_numpy_or_raises,
                  gather_matches_numpy_or_raises, scatter_matches_numpy_or_raises):
        check()
        print(f"{check.__name__}: ok", flush=True)
    sys.exit(0)
