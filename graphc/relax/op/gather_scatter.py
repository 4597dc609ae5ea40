"""gather_elements, gather_nd, scatter_elements, scatter_nd, one_hot (being written)."""

__all__: list[str] = []
