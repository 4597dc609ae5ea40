"""dataflowblock_pass (being written)."""

__all__: list[str] = []
