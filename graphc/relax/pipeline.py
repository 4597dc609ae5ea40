"""Named pass pipelines: `relax.get_pipeline(name)` (being written)."""

__all__ = ["get_pipeline"]


def get_pipeline(name: str = "zero"):
    raise NotImplementedError("relax.get_pipeline is being written")
