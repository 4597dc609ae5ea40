"""relax.vm.*: the VM's allocation and call builtins (being written)."""

__all__: list[str] = []
