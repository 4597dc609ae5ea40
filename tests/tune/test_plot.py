"""The tuning plot: the estimated model latency against tuning time, written as a PNG."""

import pytest

from graphc.tune.api import TuneReport
from graphc.tune.plot import plot_history


def test_the_plot_is_a_png(tmp_path):
    pytest.importorskip("matplotlib")
    report = TuneReport(searches=[], history=[(0.0, 2e-3), (5.0, 1.5e-3), (9.0, 1.2e-3)], elapsed=9.0,
                        skipped=[])
    path = tmp_path / "tuning.png"
    plot_history(report, path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_without_matplotlib_the_error_says_what_to_install(monkeypatch, tmp_path):
    import sys

    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(ImportError, match=r"pip install 'graphc\[tune\]'"):
        plot_history(TuneReport([], [(0.0, 1e-3)], 0.0, []), tmp_path / "x.png")
