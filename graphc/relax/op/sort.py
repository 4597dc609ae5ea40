"""sort, argsort, topk (being written)."""

__all__: list[str] = []
