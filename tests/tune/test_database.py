"""The tuning records: JSON-lines round trip, best per task, resumable, stale and foreign records."""

import json
import warnings

import pytest

from graphc.tune.database import Database, TuningRecord, TuningRecordError, TuningRecordWarning, target_key

TARGET = target_key("llvm")


def record(workload="w1", times=(0.002,), status="ok", decisions=((0, [4, 8]),), **kwargs):
    return TuningRecord(workload=workload, target=kwargs.pop("target", TARGET), rule="Matmul",
                        trace={"insts": []}, decisions=[list(d) for d in decisions], times=list(times),
                        status=status, **kwargs)


def test_records_round_trip_through_the_file(tmp_path):
    path = tmp_path / "records.json"
    db = Database(path)
    db.add(record(times=[0.003, 0.002]))
    db.add(record(times=[0.001], decisions=[(0, [8, 4])]))
    db.add(record(times=[], status="timeout", decisions=[(0, [2, 16])], error="no answer"))
    again = Database(path)
    assert [r.to_json() for r in again] == [r.to_json() for r in db]
    assert again.best("w1", TARGET).decisions == [[0, [8, 4]]]
    assert again.trials("w1", TARGET) == 3
    assert again.measured("w1", TARGET) == {r.decision_key for r in db}
    assert len(path.read_text().splitlines()) == 3


def test_failed_records_never_win():
    db = Database()
    db.add(record(times=[1e-9], status="wrong"))
    db.add(record(times=[0.5], decisions=[(0, [1, 32])]))
    assert db.best("w1", TARGET).times == [0.5]
    assert db.best("other", TARGET) is None


@pytest.mark.parametrize("change, words", [
    ({"version": "0.0.1"}, "graphc 0.0.1"),
    ({"target": "llvm -mtriple=x86_64-unknown-linux-gnu -mcpu=other -mattr= -opt-level=3"}, "mcpu=other"),
])
def test_stale_and_foreign_records_are_ignored_with_a_note(change, words):
    db = Database()
    db.add(record(**change))
    with pytest.warns(TuningRecordWarning, match="ignored") as caught:
        assert db.best("w1", TARGET) is None
    assert words in str(caught[0].message) and db.ignored_notes == [str(caught[0].message)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert db.best("w1", TARGET) is None  # noted once


def test_bad_files_get_clear_errors(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(record().to_json()) + "\n{not json\n")
    with pytest.raises(TuningRecordError, match=r"bad.json, line 2: not a tuning record"):
        Database(bad)
    missing_field = tmp_path / "missing.json"
    missing_field.write_text('{"workload": "w1"}\n')
    with pytest.raises(TuningRecordError, match="line 1.*needs the fields"):
        Database(missing_field)
    with pytest.raises(TuningRecordError, match="does not exist"):
        Database.open(tmp_path / "nothing.json")
    with pytest.raises(TuningRecordError, match="cannot read"):
        Database(tmp_path)  # a directory


def test_candidates_are_compared_with_the_default_measured_alongside():
    db = Database()
    db.add(record(times=[0.004], default=True, baseline=0.004, decisions=[(0, [6, 4])]))
    # measured while the machine was busy: slower in seconds, but faster than the default then
    db.add(record(times=[0.005], baseline=0.006, decisions=[(0, [8, 4])]))
    db.add(record(times=[0.0038], baseline=0.0037, decisions=[(0, [4, 4])]))  # a quiet moment, no gain
    assert db.best("w1", TARGET).decisions == [[0, [8, 4]]]
    assert db.speedup("w1", TARGET) == pytest.approx(1.2)


def test_the_latest_confirmation_decides_and_is_not_a_trial():
    db = Database()
    db.add(record(times=[0.004], default=True, baseline=0.004, decisions=[(0, [6, 4])]))
    db.add(record(times=[0.002], baseline=0.004, decisions=[(0, [8, 4])]))  # a lucky first measurement
    db.add(record(times=[0.0035], baseline=0.004, decisions=[(0, [4, 4])]))
    assert db.best("w1", TARGET).decisions == [[0, [8, 4]]]
    later = dict(confirmed=True, timestamp=10.0)
    db.add(record(times=[0.004], default=True, baseline=0.004, decisions=[(0, [6, 4])], **later))
    db.add(record(times=[0.0041], baseline=0.004, decisions=[(0, [8, 4])], **later))
    db.add(record(times=[0.0036], baseline=0.004, decisions=[(0, [4, 4])], **later))
    assert db.best("w1", TARGET).decisions == [[0, [4, 4]]] and db.best("w1", TARGET).confirmed
    assert db.trials("w1", TARGET) == 3
    again = dict(confirmed=True, timestamp=20.0)  # confirmed again: the default won this time
    db.add(record(times=[0.004], default=True, baseline=0.004, decisions=[(0, [6, 4])], **again))
    db.add(record(times=[0.0042], baseline=0.004, decisions=[(0, [4, 4])], **again))
    assert db.best("w1", TARGET).default and db.speedup("w1", TARGET) == 1.0
