#!/usr/bin/env bash
# The long randomized run: every hypothesis property test in the suite with FACTOR times its
# examples, drawn at random (about 10 minutes on 2 cores at the default 20). CI runs each
# property test with its own, derandomized examples; this run looks for new failures. Run it
# before you stop whenever you touch the printer, the parser, the simplifier, the schedule
# primitives or a frontend.
#   scripts/long_run.sh                   every property test, FACTOR=20, a fresh random seed
#   scripts/long_run.sh tests/script      only the property tests under these paths
#   FACTOR=50 scripts/long_run.sh         more examples
#   SEED=1234 scripts/long_run.sh         the same draws as the run that printed "seed 1234"
# A failure prints its minimal example (and a @reproduce_failure blob); hypothesis also keeps
# it in .hypothesis/, so the ordinary test command replays it on this checkout. Fix it and
# pin it with an @example (or a regression test) beside the property test.
set -euo pipefail
cd "$(dirname "$0")/.."
FACTOR=${FACTOR:-20}
SEED=${SEED:-$(.venv/bin/python -c "import random; print(random.randrange(2**32))")}
echo "long run: ${FACTOR}x the examples of every property test, seed ${SEED}"
exec .venv/bin/python -m pytest -n "${JOBS:-2}" -q -m hypothesis --long-run "$FACTOR" \
    --hypothesis-seed "$SEED" --hypothesis-show-statistics "$@"
