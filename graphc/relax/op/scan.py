"""cumsum and cumprod (being written)."""

__all__: list[str] = []
