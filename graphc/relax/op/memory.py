"""relax.memory.* and relax.builtin.alloc_tensor: explicit storage and tensor allocation (being written)."""

__all__: list[str] = []
