"""Pooling: max/avg pool 1d/2d/3d and adaptive average pools (being written)."""

__all__: list[str] = []
