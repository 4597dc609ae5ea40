"""The tuning plot: the estimated model latency against tuning time (matplotlib, an optional extra)."""

from __future__ import annotations


def require_matplotlib() -> None:
    """Raise a clear error when matplotlib is missing."""
    try:
        import matplotlib  # noqa: F401
    except ImportError as err:
        raise ImportError("the tuning plot needs matplotlib: pip install 'graphc[tune]' (or pip install "
                          "matplotlib)") from err


def plot_history(report, path) -> None:
    """Draw `report.history` (a `TuneReport`'s (seconds, model latency) points) into `path`."""
    require_matplotlib()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    xs = [t for t, _ in report.history]
    ys = [latency * 1e3 for _, latency in report.history]
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.step(xs, ys, where="post", marker=".")
    if ys:
        ax.axhline(ys[0], color="grey", linestyle="--", linewidth=0.8, label="default schedules")
        ax.legend()
    ax.set_xlabel("tuning time (s)")
    ax.set_ylabel("estimated model latency (ms)")
    ax.set_title("graphc tune: best latency so far")
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


__all__ = ["plot_history", "require_matplotlib"]
