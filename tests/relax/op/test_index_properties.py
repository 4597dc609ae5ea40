"""Random index tensors, valid and not, for take, gather_elements and scatter_elements: each
call matches numpy or raises IndexError, and never crashes (`index_properties.py`, run in a
subprocess so that a crash fails this test instead of killing the test session)."""

import os
import subprocess
import sys
from pathlib import Path


def test_checked_indices_match_numpy_or_raise_index_error():
    script = Path(__file__).with_name("index_properties.py")
    env = dict(os.environ, OMP_WAIT_POLICY="passive")
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=900, env=env)
    assert proc.returncode == 0, f"exit status {proc.returncode}:\n{proc.stdout}\n{proc.stderr[-4000:]}"
    assert proc.stdout.count(": ok") == 4, proc.stdout
