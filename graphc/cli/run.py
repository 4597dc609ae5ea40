"""`graphc run model.graphc`: run a compiled model once on given or random inputs; time it, profile it."""

from __future__ import annotations

from .common import positive_int

NAME = "run"
HELP = "run a compiled model (random inputs of the right shapes unless --inputs), time and profile it"


def add_arguments(parser) -> None:
    parser.add_argument("executable", metavar="EXECUTABLE", help="a file written by `graphc compile`")
    parser.add_argument("--inputs", metavar="NPZ",
                        help="the inputs, an .npz file with one array per input name (default: random)")
    parser.add_argument("--output", metavar="NPZ",
                        help="write the outputs to this .npz file (names: a dict's keys, else output_0, ...)")
    parser.add_argument("--device", default="cpu", choices=["cpu", "cuda", "opencl"],
                        help="where to run (default: cpu)")
    parser.add_argument("--print-time", action="store_true",
                        help="time the model: mean, median, max, min and std over --repeat measurements")
    parser.add_argument("--repeat", type=positive_int, default=10, metavar="N",
                        help="measurements for --print-time (default: 10)")
    parser.add_argument("--number", type=positive_int, default=1, metavar="N",
                        help="calls averaged in each measurement (default: 1)")
    parser.add_argument("--profile", action="store_true", help="print the time of every kernel of one call")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random inputs (default: 0)")



def run(args) -> int:
    from ..runner import run as run_model

    result = run_model(args.executable, args.device, args.inputs, benchmark=args.print_time,
                       repeat=args.repeat, number=args.number, profile=args.profile, seed=args.seed)
    if args.inputs is None:
        print(f"(random inputs, seed {args.seed})")
    print(result)
    if args.output:
        result.save(args.output)
        print(f"outputs written to {args.output}")
    return 0
