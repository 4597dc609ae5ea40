"""Scaled dot-product attention (being written)."""

__all__: list[str] = []
