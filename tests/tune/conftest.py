"""The search tests need a rule with decisions: the default CPU rules once they sample (issue 16,
part A), else `SplitTiles`, a small sampling rule for matmul-like blocks tried before them."""

import pytest

from graphc import te
from graphc.dlight import ScheduleRule


class SplitTiles(ScheduleRule):
    """i, j, k -> io, jo, k, ii, ji with sampled tiles; io parallel, ji vectorized."""

    def apply(self, func, target, tunable):
        from graphc.errors import ScheduleError
        from graphc.tir.schedule import Schedule

        sch = Schedule(func)
        try:
            blocks = sch.get_child_blocks(sch.get_block("root"))
        except ScheduleError:
            return None
        if len(blocks) != 1 or len(sch.get_loops(blocks[0])) != 3:
            return None
        i, j, k = sch.get_loops(blocks[0])
        io, ii = sch.split(i, factors=sch.sample_perfect_tile(i, n=2, max_innermost_factor=32))
        jo, ji = sch.split(j, factors=sch.sample_perfect_tile(j, n=2, max_innermost_factor=64))
        sch.reorder(io, jo, k, ii, ji)
        sch.parallel(io)
        sch.vectorize(ji)
        return sch


def _default_rules_sample() -> bool:
    from graphc.tune.space import space_size

    A = te.placeholder((64, 64), "float32", name="A")
    B = te.placeholder((64, 64), "float32", name="B")
    k = te.reduce_axis((0, 64), "k")
    C = te.compute((64, 64), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    return space_size(te.create_prim_func([A, B, C]), "llvm") > 1


@pytest.fixture(scope="module")
def searchable_rules():
    """(The search tests use it: `pytestmark = pytest.mark.usefixtures("searchable_rules")`.)"""
    with pytest.MonkeyPatch.context() as patch:
        if not _default_rules_sample():
            import graphc.tune.space as space
            from graphc.dlight import default_rules

            patch.setattr(space, "default_rules", lambda target: [SplitTiles(), *default_rules(target)])
        yield
