"""The examples run (the README's main command is examples/quickstart.py)."""

import runpy
import sys
from pathlib import Path

EXAMPLES = Path(__file__).parent.parent / "examples"


def test_quickstart_runs_and_agrees_with_pytorch(monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["quickstart.py", "--quiet"])
    runpy.run_path(str(EXAMPLES / "quickstart.py"), run_name="__main__")
    out = capsys.readouterr().out
    for heading in ("1. imported from PyTorch", "2. after LegalizeOps", '3. after the "zero" pipeline',
                    "4. the VM bytecode", "5. results"):
        assert heading in out
    assert "fused_matmul_add_relu" in out
    assert "latency at batch 1" in out


def test_tensor_programs_example_runs(monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["tensor_programs.py"])
    runpy.run_path(str(EXAMPLES / "tensor_programs.py"), run_name="__main__")
    out = capsys.readouterr().out
    assert "scheduled matmul" in out and "faster than unscheduled" in out
