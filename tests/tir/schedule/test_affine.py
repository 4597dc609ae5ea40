"""The affine-binding detector (split/fuse forms) and the inverse of bijective index maps."""

import pytest

from graphc import tir
from graphc.tir.schedule.affine import detect_bijective, inverse, is_affine_binding

i, j, k, v = (tir.Var(n) for n in "ijkv")
n = tir.Var("n")
R = tir.Range.make
DOM3 = {i: R(2), j: R(17), k: R(6)}


@pytest.mark.parametrize(
    "values, dom, predicate, affine",
    [
        ([i, j], {i: R(4), j: R(8)}, None, True),
        ([i * 8 + j], {i: R(4), j: R(8)}, None, True),  # fuse
        ([(i * 8 + j) // 16, (i * 8 + j) % 16], {i: R(4), j: R(8)}, None, True),  # fuse then split
        ([i * 6 + j], {i: R(3), j: R(6)}, i * 6 + j < 16, True),  # a non-dividing split
        ([(i * 6 + j) // 4, (i * 6 + j) % 4], {i: R(3), j: R(6)}, i * 6 + j < 16, True),
        ([k // (n * 4), k % (n * 4) // n, k % n], {k: R(n * 32)}, None, True),  # symbolic fuse
        # division and modulo by a symbolic extent that is not a lone variable (dlight's fused
        # block index over `(m + 31) // 32` row tiles), with the padded rows cut by `< m`
        (
            [k // ((n + 31) // 32 * 2), k % ((n + 31) // 32 * 2) // 2 * 32 + j, k % 2],
            {k: R((n + 31) // 32 * 6), j: R(32)},
            k % ((n + 31) // 32 * 2) // 2 * 32 + j < n,
            True,
        ),
        ([k // ((n + 31) // 32 * 4)], {k: R((n + 31) // 32 * 6)}, None, False),  # 4 does not divide 6
        ([i + j], {i: R(4), j: R(8)}, None, False),  # overlapping terms
        ([i * 2 + j], {i: R(4), j: R(4)}, None, False),
        ([2 * i], {i: R(4)}, None, False),  # scale other than 1
        ([i, i], {i: R(4)}, None, False),  # one loop in two bindings
        ([i // 3], {i: R(8)}, None, False),  # does not divide the extent
        ([i * i], {i: R(4)}, None, False),
        ([i, j], {i: R(4), j: R(8)}, i * 8 + j < 10, False),  # the predicate groups what the bindings split
        # a padded split of a padded split: 197 -> (33, 6) -> ((2, 17), 6), both predicates kept
        ([i * 102 + j * 6 + k], DOM3, tir.And((i * 17 + j) * 6 + k < 197, i * 17 + j < 33), True),
        ([i * 102 + j * 6 + k], DOM3, tir.And(i * 17 + j < 33, (i * 17 + j) * 6 + k < 197), True),
        ([i * 17 + j, k], DOM3, (i * 17 + j) * 6 + k < 197, False),
        # a fused block index of a unit loop and a 2-loop: `v // 2` is always 0 (gpu.Matmul, 2 x 33)
        (
            [j, v * 32 + k],
            {v: R(2), j: R(2), k: R(32)},
            tir.And(v // 2 * 32 + j < 2, v % 2 * 32 + k < 33),
            True,
        ),  # fmt: skip
    ],
)
def test_is_affine_binding(values, dom, predicate, affine):
    assert is_affine_binding(values, dom, predicate) is affine


def test_bijective_inverse():
    u0, u1, u2 = tir.Var("u0"), tir.Var("u1"), tir.Var("u2")
    ana = tir.arith.Analyzer()
    found = detect_bijective([v // 16, v % 16], {v: R(256)})
    assert str(inverse(*found, [u0, u1])[v]) == "u0 * 16 + u1"
    found = detect_bijective([j, i], {i: R(4), j: R(8)})
    got = inverse(*found, [u0, u1])
    assert got[i] is u1 and got[j] is u0
    found = detect_bijective([i * 4 + j, k], {i: R(4), j: R(4), k: R(2)})
    got = inverse(*found, [u0, u1])
    assert ana.can_prove(got[i] == u0 // 4) and ana.can_prove(got[j] == u0 % 4) and got[k] is u1
    found = detect_bijective([i + 1], {i: R(4)})
    assert str(inverse(*found, [u2])[i]) == "u2 - 1"
    assert detect_bijective([i // 2], {i: R(4)}) is None  # not one-to-one
    assert detect_bijective([i], {i: R(4), j: R(3)}) is None  # j unused
