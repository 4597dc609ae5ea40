"""Convolutions: conv1d/2d/3d and conv2d_transpose (being written)."""

__all__: list[str] = []
