"""`graphc tune MODEL -o records.json`: search faster kernels for a model, into a records file."""

from __future__ import annotations

from .common import add_model_arguments, positive_int, positive_seconds, shapes_of, target_of, usage_error

NAME = "tune"
HELP = ("search faster schedules for a model's kernels (apply the records with "
        "`graphc compile --tuning-records`)")


def add_arguments(parser) -> None:
    add_model_arguments(parser)
    parser.add_argument("--trials", type=positive_int, default=64, metavar="N",
                        help="measurements of all kernels together, those already in the records file "
                             "included (default: 64)")
    parser.add_argument("--timeout", type=positive_seconds, default=10.0, metavar="S",
                        help="seconds one candidate may take to build and run (default: 10)")
    parser.add_argument("--time-budget", type=positive_seconds, metavar="S",
                        help="start no new round of measurements after this many seconds")
    parser.add_argument("-o", "--output", metavar="RECORDS", required=True,
                        help="the records file (JSON lines); an existing one is continued")
    parser.add_argument("--plot", metavar="PNG", help="draw the estimated model latency against tuning time")
    parser.add_argument("--seed", type=int, default=0, help="seed of the search (default: 0)")



def run(args) -> int:
    from ..loader import load
    from ..tune.api import require_device, tune
    from ..tune.database import Database, TuningRecordError

    target = target_of(args)
    if not target.is_cpu:  # measured on the target's device: say at once when there is none
        require_device(target)
    shapes = shapes_of(args)
    try:
        db = Database(args.output)
    except TuningRecordError as err:
        raise usage_error(f"-o {args.output}: {err}") from err
    before = len(db)
    if before:
        print(f"graphc tune: continuing {args.output} ({before} records)")
    mod = load(args.model, shape_dict=shapes)
    db = tune(mod, target, trials=args.trials, time_budget=args.time_budget, timeout=args.timeout, records=db,
              seed=args.seed, plot=args.plot)
    report = db.last_run
    print(report.summary())
    for note in db.ignored_notes:
        print(f"note: {note}")
    print(f"graphc tune: {len(db) - before} new records -> {args.output}"
          + (f", plot -> {args.plot}" if args.plot else ""))
    return 0


__all__ = ["HELP", "NAME", "add_arguments", "run"]
