"""resize2d and grid_sample computes (being written)."""

__all__: list[str] = []
