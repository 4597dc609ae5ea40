"""Index values out of range, for every torch operator that addresses memory from data.

Each operator (see `index_error_models.py`) runs in a subprocess with indices at both ends
of the valid range, one past each end and far past it (10**9): an out-of-range value must
raise IndexError naming the Relax call, the torch node, the index input (by the name torch
gives it; several index tensors are named in the torch node, the message naming the axis),
the value and the valid range; an in-range value must give torch's answer, and so must good
input after the errors (the VM stays usable). A crash of the subprocess fails the test and
nothing else.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).with_name("index_error_models.py")
sys.path.insert(0, str(SCRIPT.parent))
from index_error_models import MODELS, values  # noqa: E402

sys.path.pop(0)


# one subprocess per family of operators (each model is still compiled and run on its own)
FAMILIES = {
    "embedding": ["embedding"],
    "gather": ["gather"],
    "index_select": ["index_select"],
    "index": ["index_tensor", "index_tensor_2d"],
    "scatter": sorted(n for n in MODELS if n.startswith("scatter")),
    "index_put": ["index_put", "index_put_accumulate"],
    "one_hot": ["one_hot"],
}


def test_every_model_is_in_a_family():
    assert sorted(n for names in FAMILIES.values() for n in names) == sorted(MODELS)


def _run(names: list) -> dict:
    env = dict(os.environ, OMP_WAIT_POLICY="passive")
    proc = subprocess.run([sys.executable, str(SCRIPT), *names], capture_output=True, text=True,
                          timeout=900, env=env)
    assert proc.returncode == 0, f"{names}: exit status {proc.returncode}:\n{proc.stderr[-3000:]}"
    results: dict = {}
    for line in proc.stdout.splitlines():
        if line.startswith("{"):
            record = json.loads(line)
            entry = results.setdefault(record.pop("model"), {"records": []})
            if "input" in record:
                entry["input"] = record["input"]
            else:
                entry["records"].append(record)
    return results


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_out_of_range_index_raises_index_error(family):
    results = _run(FAMILIES[family])
    for name in FAMILIES[family]:
        _check(name, results[name]["input"], results[name]["records"])


def _check(name: str, input_name: str, records: list) -> None:
    spec = MODELS[name]
    lo, hi = spec["valid"]
    expected_values = [*values(spec["valid"]), lo]
    assert [r["value"] for r in records] == expected_values
    for r in records:
        v = r["value"]
        if lo <= v < hi:
            assert r["outcome"] == "ok", f"{name}, index {v}: {r}"
            assert r["matches"], f"{name}, index {v}: graphc and torch differ"
            continue
        assert r["outcome"] == "IndexError", f"{name}, index {v}: {r}"
        message = r["message"]
        assert f"index {v} in " in message and f" is out of range [{lo}, {hi})" in message, message
        for part in [input_name, *spec["names"]]:
            assert part in message, f"{part!r} not in {message!r}"
    assert records[-1]["outcome"] == "ok" and records[-1]["matches"]  # usable after the errors
