"""The live table: redrawn in place on a terminal, silent elsewhere."""

import io

from graphc.tune.progress import TuneProgress


class Search:
    trials, gflops, speedup, best_time, default_time = 4, 10.0, 1.25, 1e-3, 1.25e-3
    task = type("T", (), {"name": "fused_dense", "weight": 1})()


def test_the_table_is_redrawn_in_place_on_a_terminal():
    out = io.StringIO()
    progress = TuneProgress(out, enabled=True, interval=0.0)
    progress.update([Search()], 1.0)
    progress.update([Search()], 2.0)
    text = out.getvalue()
    assert text.count("fused_dense") == 2 and "\x1b[3F" in text  # back up over the 3 lines drawn
    assert "1.25x" in text and "10.0" in text


def test_nothing_is_drawn_off_a_terminal(monkeypatch):
    monkeypatch.delenv("GRAPHC_PROGRESS", raising=False)
    out = io.StringIO()  # not a terminal
    progress = TuneProgress(out)
    progress.update([Search()], 1.0, force=True)
    progress.message("measuring")
    assert out.getvalue() == "" and not progress.enabled
