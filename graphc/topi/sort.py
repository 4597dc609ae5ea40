"""sort/argsort/topk computes (being written)."""

__all__: list[str] = []
