"""pad and pixel_shuffle computes (being written)."""

__all__: list[str] = []
