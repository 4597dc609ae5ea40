"""gather/scatter/one_hot computes (being written)."""

__all__: list[str] = []
