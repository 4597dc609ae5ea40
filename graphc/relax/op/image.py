"""Image operators: resize2d and grid_sample (being written)."""

__all__: list[str] = []
