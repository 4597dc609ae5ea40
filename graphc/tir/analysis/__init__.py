"""TensorIR analyses (access regions, verification, ...)."""
