"""CPU kernels (shape); filled in progressively."""
