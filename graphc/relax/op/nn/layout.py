"""pad and pixel_shuffle (being written)."""

__all__: list[str] = []
