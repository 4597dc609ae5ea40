"""Run many random schedules on random tensor programs and count the steps run and refused.

Every random step must raise ScheduleError and leave the schedule unchanged, or give a module
that computes what the original does (both built with LLVM and run); see
tests/tir/schedule/sched_fuzz.py. Failures are collected (not shrunk) and summarised at the
end, grouped by primitive and message. Interrupted (Ctrl-C, SIGTERM), it reports the steps run so far.

    .venv/bin/python benchmarks/schedule_fuzz.py [--examples 500] [--steps 6] [--seed 0]
"""

from __future__ import annotations

import argparse
import collections
import os
import signal
import sys
import time
import traceback

os.environ.setdefault("GRAPHC_CACHE", "0")  # thousands of one-off kernels: keep them off disk
os.environ.setdefault("OMP_WAIT_POLICY", "passive")
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "tir", "schedule"))

import sched_fuzz  # noqa: E402
from hypothesis import HealthCheck, Phase, given, seed, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=500)
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--show", type=int, default=5, help="failures to print in full")
    parser.add_argument("--minutes", type=float, default=0, help="stop drawing new examples after this long")
    args = parser.parse_args()
    stats = sched_fuzz.Stats()
    out_of_time: list = []
    failures: list = []

    @seed(args.seed)
    @settings(max_examples=args.examples, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))  # fmt: skip
    @given(data=st.data())
    def run_one(data):
        if args.minutes and time.time() - start > 60 * args.minutes:
            out_of_time.append(True)  # stop here (drawing nothing would make hypothesis see flaky data)
            raise KeyboardInterrupt
        try:
            sched_fuzz.check_random_schedule(data, stats, max_steps=args.steps)
        except Exception as err:  # noqa: BLE001 - every failure is recorded, the run goes on
            failures.append((type(err).__name__, str(err).splitlines()[:1], traceback.format_exc()))

    start = time.time()
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # a killed run still reports
    interrupted = False
    try:
        run_one()
    except KeyboardInterrupt:
        interrupted = True
    elapsed = time.time() - start
    if interrupted and not out_of_time:
        print("interrupted: the counts below are those of the steps run so far")
    print(f"programs: {stats.programs}  random steps: {stats.steps}  refused: {stats.refused} "
          f"({100.0 * stats.refused / max(stats.steps, 1):.1f}%)  failures: {len(failures)}  "
          f"time: {elapsed:.0f} s")  # fmt: skip
    print(f"{'primitive':24} {'steps':>6} {'refused':>8}")
    for op, (ran, refused) in sorted(stats.by_primitive.items()):
        print(f"{op:24} {ran:6d} {refused:8d}")
    groups = collections.Counter((kind, tuple(first)) for kind, first, _ in failures)
    for (kind, first), count in groups.most_common():
        print(f"{count:4d} x {kind}: {first[0] if first else ''}")
    for _, _, text in failures[: args.show]:
        print("-" * 80)
        print(text)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
