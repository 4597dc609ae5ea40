"""The VM lowering pipeline: the passes between the optimized module and bytecode (being written)."""

__all__: list[str] = []
