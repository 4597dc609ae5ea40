"""gather_nd, scatter_nd (every reduction, both modes) and scatter_elements' other reductions
at both ends of the valid range, one past them and 10**9 past them: IndexError naming the
value, the input, the range and the call, then the right answer on good input
(`index_edges.py`, run in a subprocess so that a crash fails this test instead of killing
the test session)."""

import os
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).with_name("index_edges.py")
CASES = 2 + 5 * 2 + 4  # gather_nd per mode, scatter_nd per reduction and mode, scatter_elements


def test_index_edges_raise_index_error_and_stay_usable():
    env = dict(os.environ, OMP_WAIT_POLICY="passive")
    proc = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True, timeout=900, env=env)
    assert proc.returncode == 0, f"exit status {proc.returncode}:\n{proc.stdout}\n{proc.stderr[-4000:]}"
    assert proc.stdout.count(": ok") == CASES, proc.stdout
