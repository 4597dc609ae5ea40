"""einsum compute (being written)."""

__all__: list[str] = []
